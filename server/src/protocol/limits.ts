// The analysis limits (`acmp.limits.*`, design.md §4 `limit`): a setting of the client, read by the server and the
// CLI, and enforced by the core, declared once here with their defaults.

export interface AnalysisLimits {
  readonly maxTasks: number;
  readonly maxDepth: number;
  readonly maxFanOut: number;
  /** Larger files (UTF-8 bytes) are not analysed: one `limit` diagnostic instead of a frozen editor. */
  readonly maxFileBytes: number;
}

export const DEFAULT_LIMITS: AnalysisLimits = {
  maxTasks: 10_000,
  maxDepth: 1_000,
  maxFanOut: 1_000,
  maxFileBytes: 20 * 1024 * 1024,
};
