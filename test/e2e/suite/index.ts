// The entry VS Code calls in the extension host (`extensionTestsPath`) for a trusted window. The same bundle runs
// under code-server (`npm run test:e2e`) and @vscode/test-electron.
import { runMocha } from './mocha';

export function run(): Promise<void> {
  return runMocha(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- evaluated once mocha's globals exist
    require('./editor.test');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- as above; after the editor suite, whose first test must run before any document is opened through the API
    require('./features.test');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
    require('./runs.test');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
    require('./feedback.test');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
    require('./graph.test');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
    require('./market.test');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
    require('./cache.test');
  });
}
