export function Button() { return <button />; }
