// Mocha in the extension host, for each entry VS Code calls (`extensionTestsPath`): the test files are bundled into
// the entry, so each entry loads its own once mocha's globals exist.
import Mocha from 'mocha';

/** Runs the tests `load` evaluates (it requires the bundled test files); resolves when every test passed. */
export function runMocha(load: () => void): Promise<void> {
  const mocha = new Mocha({ ui: 'tdd', timeout: 60_000, color: false, reporter: 'spec' });
  mocha.suite.emit('pre-require', globalThis, 'e2e', mocha);
  load();
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} test(s) failed`)) : resolve()));
  });
}
