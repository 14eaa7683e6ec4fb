// The entry VS Code calls in the extension host for the durable-runs phase of `npm run test:e2e`: the suite reloads
// the window halfway, and VS Code calls this entry again in the reloaded window (durable.test.ts).
import { runMocha } from './mocha';

export function run(): Promise<void> {
  return runMocha(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- evaluated once mocha's globals exist
    require('./durable.test');
  });
}
