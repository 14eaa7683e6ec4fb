// `acmp-dag validate` as a user runs it: the built CLI as a process, every format and exit code.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

const CLI = resolve(__dirname, '../../dist/cli.js');
const ROOT = resolve(__dirname, '../..');
const run = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8' });

const scratch = mkdtempSync(join(tmpdir(), 'acmp-cli-'));
const broken = join(scratch, 'broken.acmp-dag.json');
writeFileSync(
  broken,
  '{\n  "dag_id": "dag_x",\n  "tasks": [\n    { "task_id": "task_a", "capability": "echo", "input": { "type": "text", "data": 1 } }\n  ],\n  "edges": [ { "from": "task_a", "to": "task_nope" } ]\n}\n',
);

test('a clean file exits 0 with a summary', () => {
  const result = run('validate', 'examples/text-pipeline.acmp-dag.json');
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /1 file\(s\) checked: 0 error\(s\)/);
});

test('text format: file:line:col severity code message, exit 1 on errors', () => {
  const result = run('validate', broken);
  assert.equal(result.status, 1);
  assert.ok(result.stdout.includes(`${broken}:6:40 error dangling-edge Edge #1 "to" names "task_nope"`), result.stdout);
});

test('json format lists each file with LSP-shaped diagnostics', () => {
  const result = run('validate', '--format', 'json', broken, 'examples/text-pipeline.acmp-dag.json');
  assert.equal(result.status, 1);
  const files = JSON.parse(result.stdout) as {
    file: string;
    diagnostics: { code: string; range: { start: { line: number } } }[];
  }[];
  assert.equal(files.length, 2);
  assert.deepEqual(
    files[0]!.diagnostics.map((d) => [d.code, d.range.start.line]),
    [['dangling-edge', 5]],
  );
  assert.deepEqual(files[1]!.diagnostics, []);
});

test('sarif format is SARIF 2.1.0 with the codes as rule ids', () => {
  const result = run('validate', '--format', 'sarif', broken);
  assert.equal(result.status, 1);
  const sarif = JSON.parse(result.stdout) as {
    version: string;
    runs: {
      tool: { driver: { rules: { id: string }[] } };
      results: {
        ruleId: string;
        ruleIndex: number;
        level: string;
        locations: { physicalLocation: { region: { startLine: number; startColumn: number } } }[];
      }[];
    }[];
  };
  assert.equal(sarif.version, '2.1.0');
  const [run0] = sarif.runs;
  assert.ok(run0!.tool.driver.rules.some((rule) => rule.id === 'cycle'));
  const [first] = run0!.results;
  assert.equal(first!.ruleId, 'dangling-edge');
  assert.equal(run0!.tool.driver.rules[first!.ruleIndex]!.id, 'dangling-edge');
  assert.equal(first!.level, 'error');
  assert.deepEqual(first!.locations[0]!.physicalLocation.region.startLine, 6);
});

test('usage errors and unreadable files exit 2', () => {
  assert.equal(run().status, 2);
  assert.equal(run('frobnicate').status, 2);
  assert.equal(run('validate').status, 2);
  assert.equal(run('validate', '--format', 'yaml', broken).status, 2);
  const missing = run('validate', join(scratch, 'absent.acmp-dag.json'));
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /cannot read/);
});

test('a providers file enables unknown-capability', () => {
  const providers = join(scratch, 'providers.json');
  writeFileSync(
    providers,
    JSON.stringify({ providers: [{ id: 'p', transport: 'stdio', command: 'x', capabilities: ['summarize'] }] }),
  );
  const result = run('validate', '--providers', providers, 'examples/text-pipeline.acmp-dag.json');
  assert.equal(result.status, 0);
  assert.equal((result.stdout.match(/unknown-capability/g) ?? []).length, 4);
});

test('a reader that stops early (`validate FILE | head -1`) ends the CLI quietly, with its usual exit code', async () => {
  // 2,000 information diagnostics (task ids not of the form task_<...>): far more output than a pipe holds.
  const many = join(scratch, 'many.acmp-dag.json');
  const tasks = Array.from({ length: 2_000 }, (_, index) => ({
    task_id: `t${index}`,
    capability: 'echo',
    input: { type: 'text', data: 'x' },
  }));
  writeFileSync(many, JSON.stringify({ dag_id: 'dag_many', tasks, edges: [] }, null, 2));
  const whole = run('validate', many);
  assert.equal((whole.stdout.match(/ information id-format /g) ?? []).length, 2_000);
  assert.ok(whole.stdout.length > 4 * 65_536, `${whole.stdout.length} bytes fit in a pipe`);

  const cli = spawn(process.execPath, [CLI, 'validate', many], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  cli.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [first] = (await once(cli.stdout, 'data')) as [Buffer];
  cli.stdout.destroy();
  const [code] = (await once(cli, 'close')) as [number | null];
  assert.match(first.toString(), /information id-format/);
  assert.equal(stderr, '');
  assert.equal(code, whole.status);
});
