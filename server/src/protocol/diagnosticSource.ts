// The `source` of every diagnostic the server publishes and the CLI prints (design.md §3): clients filter by it.
export const DIAGNOSTIC_SOURCE = 'acmp-dag';
