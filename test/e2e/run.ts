// `npm run test:e2e`: the extension-host suite inside a real VS Code (code-server driven by Chromium, launcher.ts).
// Two phases, each a fresh code-server and browser profile: the main suite in a trusted window, then a small suite
// in a window that opens a folder in Restricted Mode (`npm run test:e2e -- untrusted` runs one phase only).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProviderConfig } from '../../server/src/protocol/settings';
import { Failure, buildExtensionAndSuite, suiteFile, untrustedSuiteFile, workspace } from './build';
import { type WindowOptions, ensureCodeServer, runWindow, screenshots } from './launcher';

/** Each phase's suite, window start-up included, must finish within this. */
const SUITE_DEADLINE_MS = 5 * 60_000;

/**
 * A folder no profile has trusted, whose settings name a stdio provider that writes a marker file when started;
 * the suite looks for the marker (outside the folder) at ACMP_E2E_PROVIDER_MARKER.
 */
function untrustedWorkspace(scratch: string): { folder: string; env: Record<string, string> } {
  const folder = join(scratch, 'workspace');
  const marker = join(scratch, 'provider-ran');
  const provider: ProviderConfig = {
    id: 'marker',
    transport: 'stdio',
    command: process.execPath,
    args: ['-e', `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`],
  };
  mkdirSync(join(folder, '.vscode'), { recursive: true });
  writeFileSync(join(folder, '.vscode', 'settings.json'), JSON.stringify({ 'acmp.providers': [provider] }, null, 2));
  return { folder, env: { ACMP_E2E_PROVIDER_MARKER: marker } };
}

const PHASES: readonly WindowOptions[] = [
  {
    name: 'trusted',
    suite: suiteFile,
    trusted: true,
    deadlineMs: SUITE_DEADLINE_MS,
    prepare: () => ({ folder: workspace }),
  },
  {
    name: 'untrusted',
    suite: untrustedSuiteFile,
    trusted: false,
    deadlineMs: SUITE_DEADLINE_MS,
    prepare: untrustedWorkspace,
  },
];

async function main(): Promise<number> {
  const named = process.argv.slice(2);
  const unknown = named.filter((name) => !PHASES.some((phase) => phase.name === name));
  if (unknown.length > 0) {
    throw new Failure(`no phase ${unknown.join(', ')}; the phases: ${PHASES.map((phase) => phase.name).join(', ')}`);
  }
  const phases = named.length === 0 ? PHASES : PHASES.filter((phase) => named.includes(phase.name));
  const entry = ensureCodeServer();
  await buildExtensionAndSuite();

  // Every phase runs, so that one failing does not hide the other's result.
  let failed = 0;
  for (const phase of phases) {
    const started = Date.now();
    const code = await runWindow(entry, phase);
    console.log(`e2e: ${phase.name} phase: exit code ${code} after ${Math.round((Date.now() - started) / 1000)} s`);
    if (code !== 0) failed = code;
  }
  console.log(`e2e: screenshots in ${screenshots}`);
  return failed;
}

main()
  .then((code) => {
    process.exitCode = code;
  })
  .catch((error: unknown) => {
    console.error(`e2e: ${error instanceof Failure ? error.message : String(error)}`);
    process.exitCode = 1;
  });
