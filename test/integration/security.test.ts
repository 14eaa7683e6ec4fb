// Security guarantees across process boundaries: a planted bearer token never shows in the CLI's output, the language
// server's notifications and log messages, or a run report, whether runs succeed or fail; and the language server
// leaves the user's files on disk as they were.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { TextEdit } from 'vscode-languageserver-types';
import type { ProviderConfig } from '../../server/src/protocol/settings';
import { RUN_COMMANDS, type RunDagArguments } from '../../server/src/protocol/runMessages';
import type { RunReport } from '../../server/src/protocol/report';
import { type LspSession, startLspSession } from '../support/lspHarness';
import { freePort } from '../support/system';

/** The bundle `npm run build` makes; ACMP_CLI_BUNDLE points elsewhere (a separate build while developing). */
const CLI_BUNDLE = process.env.ACMP_CLI_BUNDLE ?? resolve(__dirname, '../../dist/cli.js');
const ROOT = resolve(__dirname, '../..');
const QUOTES_TOKEN = join(ROOT, 'test/fixtures/providers/quotes-token.ts');
const PIPELINE = readFileSync(join(ROOT, 'examples/text-pipeline.acmp-dag.json'), 'utf8');

/** Tokens no output could contain by chance. */
const ENV_TOKEN = `acmp_tok_env_${randomUUID()}`;
const RUN_TOKEN = `acmp_tok_run_${randomUUID()}`;
const TOKEN_ENV = 'ACMP_SECURITY_TEST_TOKEN';

const scratch = mkdtempSync(join(tmpdir(), 'acmp-security-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * Providers that each get a token: one quotes it in its error answer, one on stderr as it crashes, one in a message
 * that is not JSON-RPC, one in the output of a task it completes, and one reads that output downstream.
 */
const stdioProviders = (tokenEnv?: string): ProviderConfig[] =>
  ['token-answer', 'token-crash', 'token-garbage', 'token-echo', 'token-check'].map((capability) => ({
    id: capability,
    transport: 'stdio',
    command: process.execPath,
    args: ['--import', 'tsx', QUOTES_TOKEN],
    capabilities: [capability],
    ...(tokenEnv === undefined ? {} : { tokenEnv }),
  }));

/**
 * One task that completes on the built-in provider, four that fail on providers holding a token, one whose provider
 * echoes its token in its output and one downstream of it.
 */
const TOKEN_DAG = JSON.stringify(
  {
    dag_id: 'dag_tokens',
    tasks: [
      { task_id: 'task_fine', capability: 'echo', input: { type: 'text', data: 'fine' } },
      { task_id: 'task_answer', capability: 'token-answer', input: { type: 'text', data: 'answer' } },
      { task_id: 'task_crash', capability: 'token-crash', input: { type: 'text', data: 'crash' } },
      { task_id: 'task_garbage', capability: 'token-garbage', input: { type: 'text', data: 'garbage' } },
      { task_id: 'task_remote', capability: 'token-remote', input: { type: 'text', data: 'remote' } },
      { task_id: 'task_echo', capability: 'token-echo', input: { type: 'text', data: 'echo' } },
      { task_id: 'task_check', capability: 'token-check', input: { source: { from_task: 'task_echo' } } },
    ],
    edges: [{ from: 'task_echo', to: 'task_check' }],
  },
  null,
  2,
);

/** The report shows each provider received the token and quoted it, and that it was blanked out. */
function assertTokensWereQuotedAndBlanked(report: RunReport): void {
  const byId = new Map(report.tasks.map((task) => [task.task_id, task]));
  assert.equal(byId.get('task_fine')?.state, 'completed');
  for (const id of ['task_answer', 'task_crash', 'task_garbage', 'task_remote']) {
    assert.equal(byId.get(id)?.state, 'failed', id);
  }
  assert.match(byId.get('task_answer')?.error?.message ?? '', /the token \[token\] is not accepted/);
  assert.match(byId.get('task_crash')?.error?.message ?? '', /ACMP_TOKEN=\[token\]/);
  assert.match(byId.get('task_garbage')?.error?.message ?? '', /not JSON-RPC: Unrecognized key: "\[token\]"/);
  // Shown without the token, in its strings and its keys alike; the downstream task still got it as sent.
  const echoed = { echoed: 'Bearer [token]', '[token]': 'as a key', nested: [['[token]']] };
  assert.deepEqual(byId.get('task_echo')?.output, { type: 'json', data: echoed });
  // Marked, so that a re-run runs the task again rather than hand `[token]` downstream.
  assert.equal(byId.get('task_echo')?.output_redacted, true);
  assert.equal(byId.get('task_fine')?.output_redacted, undefined);
  assert.deepEqual(report.result.task_check, { type: 'text', data: 'input held the token' });
}

function assertNoToken(output: string, where: string): void {
  for (const token of [ENV_TOKEN, RUN_TOKEN]) assert.ok(!output.includes(token), `a token appears in ${where}`);
}

describe('tokens never appear in outputs', () => {
  test('acmp-dag run: neither its progress nor its report, on stdout or stderr', async () => {
    const remote: ProviderConfig = {
      id: 'token-remote',
      transport: 'http',
      url: `http://127.0.0.1:${await freePort()}/mcp`,
      tokenEnv: TOKEN_ENV,
      capabilities: ['token-remote'],
    };
    const providersFile = join(scratch, 'tokens.providers.json');
    writeFileSync(
      providersFile,
      JSON.stringify({ providers: [{ id: 'local', transport: 'builtin' }, ...stdioProviders(TOKEN_ENV), remote] }),
    );
    const dagFile = join(scratch, 'tokens.acmp-dag.json');
    writeFileSync(dagFile, TOKEN_DAG);
    const run = (...flags: string[]) =>
      spawnSync(
        process.execPath,
        [CLI_BUNDLE, 'run', dagFile, '--providers', providersFile, '--policy', 'best-effort', ...flags],
        { cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { ...process.env, [TOKEN_ENV]: ENV_TOKEN } },
      );
    const json = run('--json');
    assert.equal(json.status, 1, json.stderr);
    assertTokensWereQuotedAndBlanked(JSON.parse(json.stdout) as RunReport);
    const progress = run();
    assert.equal(progress.status, 1, progress.stderr);
    assert.match(progress.stdout, /task_crash/);
    for (const [name, output] of Object.entries({ json, progress })) {
      assertNoToken(output.stdout, `the stdout of run ${name}`);
      assertNoToken(output.stderr, `the stderr of run ${name}`);
    }
  });

  test('the language server: neither its notifications, its log messages nor the report', async () => {
    const remote: ProviderConfig = {
      id: 'token-remote',
      transport: 'http',
      url: `http://127.0.0.1:${await freePort()}/mcp`,
      capabilities: ['token-remote'],
    };
    // The stdio providers take their token from the server's environment, the remote one from the run's `tokens`.
    const stdio = stdioProviders(TOKEN_ENV);
    process.env[TOKEN_ENV] = ENV_TOKEN;
    const session = await startLspSession({ providers: [{ id: 'local', transport: 'builtin' }, ...stdio, remote] });
    delete process.env[TOKEN_ENV];
    const notifications: string[] = [];
    session.connection.onNotification((method, params) => notifications.push(`${method} ${JSON.stringify(params)}`));
    try {
      const uri = 'file:///security/tokens.acmp-dag.json';
      await session.open(uri, TOKEN_DAG);
      const argument: RunDagArguments = { uri, policy: 'best-effort', tokens: { 'token-remote': RUN_TOKEN } };
      const report = await session.connection.sendRequest<RunReport>('workspace/executeCommand', {
        command: RUN_COMMANDS.runDag,
        arguments: [argument],
      });
      assertTokensWereQuotedAndBlanked(report);
      // The same run with every token handed over per run.
      const perRun = await session.connection.sendRequest<RunReport>('workspace/executeCommand', {
        command: RUN_COMMANDS.runDag,
        arguments: [{ ...argument, tokens: Object.fromEntries(stdio.map(({ id }) => [id, RUN_TOKEN])) }],
      });
      assertTokensWereQuotedAndBlanked(perRun);
      assertNoToken(JSON.stringify([report, perRun]), 'a run report');
      assert.ok(notifications.some((notification) => notification.startsWith('acmp/runEvent')));
      assertNoToken(notifications.join('\n'), 'a notification or log message');
    } finally {
      await session.stop();
    }
  });
});

describe("the user's files", () => {
  let session: LspSession;
  let workspace: string;
  before(async () => {
    workspace = mkdtempSync(join(scratch, 'workspace-'));
    session = await startLspSession({}, { workspaceFolder: workspace });
  });
  after(() => session.stop());

  test('stay byte for byte as they were after opening, formatting requests, runs and closing', async () => {
    const file = join(workspace, 'pipeline.acmp-dag.json');
    // On one line: formatting has edits to offer, which the client chooses not to apply.
    const text = JSON.stringify(JSON.parse(PIPELINE));
    writeFileSync(file, text);
    const before = { bytes: readFileSync(file), mtime: statSync(file).mtimeMs, files: readdirSync(workspace) };
    const uri = pathToFileURL(file).href;
    const runDag = () =>
      session.connection.sendRequest<RunReport>('workspace/executeCommand', {
        command: RUN_COMMANDS.runDag,
        arguments: [{ uri }],
      });

    assert.equal((await runDag()).status, 'completed', 'a run of the file on disk');
    await session.open(uri, text);
    const edits = await session.connection.sendRequest<TextEdit[]>('textDocument/formatting', {
      textDocument: { uri },
      options: { tabSize: 2, insertSpaces: true },
    });
    assert.ok(edits.length > 0, 'formatting offers edits');
    assert.equal((await runDag()).status, 'completed', 'a run of the open document');
    await session.change(uri, 2, text.replace('dag_f4e2a1', 'dag_edited'));
    assert.equal((await runDag()).status, 'completed', 'a run of the edited, unsaved document');
    await session.close(uri);

    assert.deepEqual(readFileSync(file), before.bytes);
    assert.equal(statSync(file).mtimeMs, before.mtime);
    assert.deepEqual(readdirSync(workspace), before.files, 'no file created next to it');
  });
});
