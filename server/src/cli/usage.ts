// Kept apart from the commands so that the dispatcher can tell a usage error without loading any of them.

/** A problem with what the user typed or pointed at: the CLI prints it with its usage and exits 2. */
export class UsageError extends Error {}
