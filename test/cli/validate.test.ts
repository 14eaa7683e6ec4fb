// `acmp-dag validate` as a user runs it: the built CLI as a process, every format and exit code.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Diagnostic } from 'vscode-languageserver-types';
import type { ProviderConfig } from '../../server/src/protocol/settings';
import { fixtureProviders, readFixtureOptions } from '../support/fixtureOptions';
import { startLspSession } from '../support/lspHarness';

const CLI = resolve(__dirname, '../../dist/cli.js');
const ROOT = resolve(__dirname, '../..');
const run = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8' });

const scratch = mkdtempSync(join(tmpdir(), 'acmp-cli-'));

/** A provider that declares `capabilities`, as the providers file and the `acmp.providers` setting hold it. */
const providerOffering = (capabilities: readonly string[]): ProviderConfig => ({
  id: 'p',
  transport: 'stdio',
  command: 'x',
  capabilities: [...capabilities],
});

/** A providers file (design.md §6) with one provider that declares `capabilities`. */
function providersFile(name: string, capabilities: readonly string[]): string {
  const file = join(scratch, `${name}.providers.json`);
  writeFileSync(file, JSON.stringify({ providers: [providerOffering(capabilities)] }));
  return file;
}
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

test('usage errors exit 2', () => {
  assert.equal(run().status, 2);
  assert.equal(run('frobnicate').status, 2);
  assert.equal(run('validate').status, 2);
  assert.equal(run('validate', '--format', 'yaml', broken).status, 2);
});

test('a file not checked, unreadable or too large to analyse, exits 3, and the others are checked', () => {
  const absent = join(scratch, 'absent.acmp-dag.json');
  const missing = run('validate', absent, broken);
  assert.equal(missing.status, 3, 'over the 1 of the errors found');
  assert.match(missing.stderr, /cannot read .*absent\.acmp-dag\.json: ENOENT; not checked/);
  assert.match(missing.stdout, /dangling-edge/);
  assert.match(missing.stdout, /absent\.acmp-dag\.json: not checked: cannot read/);
  assert.match(missing.stdout, /1 file\(s\) checked: 1 error\(s\).* 1 file\(s\) not checked\.$/m);

  // Over the default limit of 20 MB: a clean DAG padded with blanks.
  const large = join(scratch, 'large.acmp-dag.json');
  writeFileSync(large, '{"dag_id":"dag_x","tasks":[],"edges":[]}' + ' '.repeat(21 * 1024 * 1024));
  const skipped = run('validate', large);
  assert.equal(skipped.status, 3, skipped.stdout);
  assert.match(skipped.stdout, /warning limit The file is too large to analyse/);
  const json = JSON.parse(run('validate', '--format', 'json', large, absent).stdout) as { notChecked?: string }[];
  assert.deepEqual(
    json.map((file) => file.notChecked?.replace(/ \(.*|: ENOENT$/, '')),
    ['too large to analyse', `cannot read ${absent}`],
  );
  const sarif = JSON.parse(run('validate', '--format', 'sarif', absent).stdout) as {
    runs: { invocations: { executionSuccessful: boolean; toolExecutionNotifications: unknown[] }[] }[];
  };
  assert.equal(sarif.runs[0]!.invocations[0]!.executionSuccessful, false);
  assert.equal(sarif.runs[0]!.invocations[0]!.toolExecutionNotifications.length, 1);
});

test('a byte order mark is accepted, positions counted as editors count them; bytes not UTF-8 are an error', () => {
  const withMark = join(scratch, 'bom.acmp-dag.json');
  writeFileSync(withMark, '\uFEFF{"dag_id":"x","tasks":[],"edges":[]}\n');
  const marked = run('validate', withMark);
  assert.equal(marked.status, 0, marked.stdout);
  // Editors show no character for the mark: "x" is at column 11, as VS Code shows it.
  assert.match(marked.stdout, /bom\.acmp-dag\.json:1:11 information id-format/);

  const latin1 = join(scratch, 'latin1.acmp-dag.json');
  writeFileSync(latin1, Buffer.from('{"dag_id":"dag_caf\xe9",\n"tasks":[],"edges":[]}', 'latin1'));
  const notUtf8 = run('validate', latin1);
  assert.equal(notUtf8.status, 1);
  assert.match(
    notUtf8.stdout,
    /latin1\.acmp-dag\.json:1:19 error json-syntax The file is not valid UTF-8: the bytes at line 1, column 19 /,
  );
  assert.doesNotMatch(notUtf8.stdout, /\uFFFD/);
});

test('nesting deeper than a run can take is a limit error: validate exits 1, run refuses with 2', () => {
  const deep = join(scratch, 'deep.acmp-dag.json');
  const nest = '['.repeat(5_000) + ']'.repeat(5_000);
  writeFileSync(
    deep,
    `{"dag_id":"dag_deep","tasks":[{"task_id":"task_a","capability":"echo","input":{"type":"json","data":${nest}}}],"edges":[]}`,
  );
  const checked = run('validate', deep);
  assert.equal(checked.status, 1);
  assert.match(checked.stdout, /deep\.acmp-dag\.json:1:\d+ error limit Task "task_a" nests 5004 levels deep/);
  const refused = run('run', deep);
  assert.equal(refused.status, 2, refused.stderr);
  assert.match(refused.stderr, /error limit Task "task_a" nests 5004 levels deep/);
  assert.doesNotMatch(refused.stderr + refused.stdout, /Maximum call stack/);
});

test('a providers file enables no-provider', () => {
  const providers = providersFile('summarize', ['summarize']);
  const result = run('validate', '--providers', providers, 'examples/text-pipeline.acmp-dag.json');
  assert.equal(result.status, 0);
  assert.equal((result.stdout.match(/no-provider/g) ?? []).length, 4);
});

test('without a providers file, capabilities the built-in provider lacks are not unknown; with one, they are', () => {
  const market = join(scratch, 'market.acmp-dag.json');
  writeFileSync(
    market,
    JSON.stringify(
      {
        dag_id: 'dag_market',
        tasks: [
          { task_id: 'task_summary', capability: 'summarization', input: { type: 'text', data: 'A. B.' } },
          { task_id: 'task_french', capability: 'translation', input: { source: { from_task: 'task_summary' } } },
        ],
        edges: [{ from: 'task_summary', to: 'task_french' }],
      },
      null,
      2,
    ),
  );
  const alone = run('validate', market);
  assert.equal(alone.status, 0, alone.stdout);
  assert.doesNotMatch(alone.stdout, /no-provider/);
  const listed = run('validate', '--providers', providersFile('summarization', ['summarization']), market);
  assert.equal(listed.status, 0, listed.stdout);
  assert.equal((listed.stdout.match(/ warning no-provider .*"translation"/g) ?? []).length, 1, listed.stdout);
  assert.doesNotMatch(listed.stdout, /no-provider .*"summarization"/);
});

/** Task "task_a" declared twice: the second declaration's diagnostic points back at the first (line 4, column 18). */
const duplicate = join(scratch, 'duplicate.acmp-dag.json');
writeFileSync(
  duplicate,
  [
    '{',
    '  "dag_id": "dag_duplicate",',
    '  "tasks": [',
    '    { "task_id": "task_a", "capability": "echo", "input": { "type": "text", "data": "x" } },',
    '    { "task_id": "task_a", "capability": "echo", "input": { "type": "text", "data": "y" } }',
    '  ],',
    '  "edges": []',
    '}',
    '',
  ].join('\n'),
);

test('text format prints related information indented under its diagnostic', () => {
  const result = run('validate', duplicate);
  assert.equal(result.status, 1);
  const lines = result.stdout.split('\n');
  const at = lines.findIndex((line) => line.startsWith(`${duplicate}:5:18 error duplicate-task-id `));
  assert.ok(at >= 0, result.stdout);
  assert.match(lines[at + 1]!, new RegExp(`^  related: ${duplicate.replace(/[.\\]/g, '\\$&')}:4:18 .*"task_a"`));
});

test('sarif results carry the related information as relatedLocations', () => {
  const result = run('validate', '--format', 'sarif', duplicate);
  assert.equal(result.status, 1);
  interface Located {
    physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number; startColumn: number } };
  }
  const sarif = JSON.parse(result.stdout) as {
    runs: {
      results: (Located & {
        ruleId: string;
        locations: Located[];
        relatedLocations?: (Located & { id: number; message: { text: string } })[];
      })[];
    }[];
  };
  const [found] = sarif.runs[0]!.results.filter((r) => r.ruleId === 'duplicate-task-id');
  const [related, ...more] = found!.relatedLocations ?? [];
  assert.deepEqual(more, []);
  assert.equal(related!.id, 0);
  assert.equal(
    related!.physicalLocation.artifactLocation.uri,
    found!.locations[0]!.physicalLocation.artifactLocation.uri,
  );
  assert.deepEqual(related!.physicalLocation.region, { startLine: 4, startColumn: 18, endLine: 4, endColumn: 26 });
  assert.match(related!.message.text, /"task_a"/);
});

test('validate --format json reports what the language server publishes, on every fixture', async (t) => {
  const fixtures = join(ROOT, 'test/fixtures/diagnostics');
  // The fixtures by the providers their options file configures (none: no providers configured).
  const byProviders = new Map<string, string[]>();
  for (const name of readdirSync(fixtures).filter((file) => file.endsWith('.acmp-dag.json'))) {
    const options = readFixtureOptions(join(fixtures, name.replace('.acmp-dag.json', '.options.json')));
    // The CLI has no flags for limits: those fixtures are the language server's alone.
    if (options.limits !== undefined) continue;
    const key = JSON.stringify(fixtureProviders(options));
    byProviders.set(key, [...(byProviders.get(key) ?? []), join(fixtures, name)]);
  }
  for (const [key, files] of byProviders) {
    const providers = JSON.parse(key) as ProviderConfig[];
    const providersFile = join(scratch, 'fixtures.providers.json');
    writeFileSync(providersFile, JSON.stringify({ providers }));
    const cli = run(
      'validate',
      '--format',
      'json',
      ...(providers.length === 0 ? [] : ['--providers', providersFile]),
      ...files,
    );
    const reported = JSON.parse(cli.stdout) as { file: string; diagnostics: Diagnostic[] }[];
    const session = await startLspSession({ providers });
    try {
      for (const { file, diagnostics } of reported) {
        const uri = pathToFileURL(file).href;
        const published = session.diagnostics(uri);
        await session.open(uri, readFileSync(file, 'utf8'));
        await t.test(basename(file), async () => assert.deepEqual(diagnostics, (await published).diagnostics));
      }
    } finally {
      await session.stop();
    }
  }
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
