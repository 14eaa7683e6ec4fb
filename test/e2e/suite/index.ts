// The entry VS Code calls in the extension host (`extensionTestsPath`): runs the mocha suite, resolves when every
// test passed. The same bundle runs under code-server (`npm run test:e2e`) and @vscode/test-electron.
import Mocha from 'mocha';

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'tdd', timeout: 60_000, color: false, reporter: 'spec' });
  // The test files are bundled here: define mocha's globals, then evaluate them.
  mocha.suite.emit('pre-require', globalThis, 'e2e', mocha);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- evaluated once mocha's globals exist
  require('./editor.test');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- as above; after the editor suite, whose first test must run before any document is opened through the API
  require('./features.test');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
  require('./runs.test');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
  require('./graph.test');
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} test(s) failed`)) : resolve()));
  });
}
