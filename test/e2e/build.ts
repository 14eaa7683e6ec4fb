// What both e2e runners share: where things are, and the build of the extension and of the suite bundle.
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import * as esbuild from 'esbuild';

export const root = resolve(__dirname, '../..');
/** The folder the trusted test window opens: the diagnostics fixtures with their expectations. */
export const workspace = join(root, 'test', 'fixtures', 'diagnostics');
const suiteDir = join(root, 'out', 'e2e', 'suite');
/** The suite for a trusted window. */
export const suiteFile = join(suiteDir, 'index.js');
/** The suite for a window in Restricted Mode (test/e2e/suite/untrusted.ts). */
export const untrustedSuiteFile = join(suiteDir, 'untrusted.js');
/** The suite of durable runs, in a window reloaded halfway (test/e2e/suite/durable.ts). */
export const durableSuiteFile = join(suiteDir, 'durable.js');
/** The extension-host side of `npm run bench:ui` (test/bench/uiHost.ts). */
export const benchUiHostFile = join(suiteDir, 'bench-ui.js');

export class Failure extends Error {}

export function run(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): void {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.status !== 0) throw new Failure(`${command} ${args.join(' ')} failed (exit ${String(result.status)})`);
}

/** Builds the extension (`npm run build`) and bundles each extension-host entry (mocha and vscode stay outside). */
export async function buildExtensionAndSuite(): Promise<void> {
  run('npm', ['run', 'build'], { cwd: root });
  await esbuild.build({
    entryPoints: {
      index: join(root, 'test', 'e2e', 'suite', 'index.ts'),
      untrusted: join(root, 'test', 'e2e', 'suite', 'untrusted.ts'),
      durable: join(root, 'test', 'e2e', 'suite', 'durable.ts'),
      'bench-ui': join(root, 'test', 'bench', 'uiHost.ts'),
    },
    outdir: suiteDir,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode', 'mocha'],
    logLevel: 'warning',
  });
}
