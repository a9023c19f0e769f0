export function format(s: string): string { return s; }
