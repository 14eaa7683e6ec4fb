// The entry VS Code calls in the extension host (`extensionTestsPath`) for a window in Restricted Mode: the second
// phase of `npm run test:e2e` opens a folder no one has trusted.
import { runMocha } from './mocha';

export function run(): Promise<void> {
  return runMocha(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- evaluated once mocha's globals exist
    require('./untrusted.test');
  });
}
