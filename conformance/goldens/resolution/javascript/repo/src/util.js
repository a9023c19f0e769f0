export function clamp(x) { return Math.max(0, x); }
