// A test's clock under its control: node's mock timers, so a deadline is checked to the millisecond without waiting
// for it and without depending on how loaded the machine is.
import type { TestContext } from 'node:test';

/** What a test does with its mock clock. */
export interface MockClock {
  /**
   * Moves the clock to `ms` one millisecond at a time, letting what each step set off run before the next (promises,
   * immediates), so each timer fires, and each event it causes is stamped, at its own millisecond.
   */
  readonly advanceTo: (ms: number) => Promise<void>;
}

/**
 * Puts `setTimeout`, `Date` and `performance.now()` on a mock clock at 0 for the rest of the test (node's mock timers
 * leave performance.now() on the real clock: it follows Date.now() here). setImmediate stays real, for `advanceTo`.
 */
export function mockClock(t: TestContext): MockClock {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
  t.mock.method(performance, 'now', () => Date.now());
  return {
    advanceTo: async (ms) => {
      while (Date.now() < ms) {
        t.mock.timers.tick(1);
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}
