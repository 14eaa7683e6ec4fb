// Mocha in the extension host, for each entry VS Code calls (`extensionTestsPath`): the test files are bundled into
// the entry, so each entry loads its own once mocha's globals exist.
import Mocha from 'mocha';
import { FAILED_MARKER, type FailedTest } from '../askProtocol';

/** Runs the tests `load` evaluates (it requires the bundled test files); resolves when every test passed. */
export function runMocha(load: () => void): Promise<void> {
  // ACMP_E2E_GREP runs only the tests whose full titles match (while working on one suite).
  const mocha = new Mocha({
    ui: 'tdd',
    timeout: 60_000,
    color: false,
    reporter: 'spec',
    grep: process.env.ACMP_E2E_GREP,
  });
  mocha.suite.emit('pre-require', globalThis, 'e2e', mocha);
  load();
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) =>
      failures > 0 ? reject(new Error(`${failures} test(s) failed`)) : resolve(),
    );
    // Each failure once more as a marked line: the runner repeats them after every phase, where a CI log's tail
    // shows them rather than the workbench's output that follows the reporter's.
    runner.on('fail', (test, error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      console.log(`${FAILED_MARKER}${JSON.stringify({ title: test.fullTitle(), message } satisfies FailedTest)}`);
    });
  });
}
