// Soak: the DAG whose outputs double at each of 18 layers. Its report is over 512 MB, more than a V8 string
// can hold (JSON.stringify of it threw "Invalid string length" after every task had completed): `run --json` streams
// it, outputs past the memory budget copied from the run's temporary files, which are gone afterwards.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { nestedOutputsDag } from '../support/nestedDag';

const CLI_BUNDLE = process.env.ACMP_CLI_BUNDLE ?? resolve(__dirname, '../../dist/cli.js');
/** V8's longest string (2 ** 29 - 24 characters on 64-bit). */
const MAX_STRING_LENGTH = 2 ** 29 - 24;

const scratch = mkdtempSync(join(tmpdir(), 'acmp-soak-nested-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** The first and last `count` bytes of a file. */
function ends(file: string, count: number): [string, string] {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(count);
    const tail = Buffer.alloc(count);
    readSync(fd, head, 0, count, 0);
    readSync(fd, tail, 0, count, statSync(file).size - count);
    return [head.toString('utf8'), tail.toString('utf8')];
  } finally {
    closeSync(fd);
  }
}

test(
  'a report larger than a string can hold is printed whole, and the run leaves no files',
  { timeout: 600_000 },
  () => {
    const dag = join(scratch, 'nested.acmp-dag.json');
    writeFileSync(dag, nestedOutputsDag(18, 2, 'x'.repeat(100)));
    const reportFile = join(scratch, 'report.json');
    const temporary = mkdtempSync(join(scratch, 'tmp-'));
    const out = openSync(reportFile, 'w');
    const run = spawnSync(process.execPath, [CLI_BUNDLE, 'run', '--json', dag], {
      stdio: ['ignore', out, 'pipe'],
      encoding: 'utf8',
      env: { ...process.env, TMPDIR: temporary },
    });
    closeSync(out);
    assert.equal(run.status, 0, run.stderr);
    const size = statSync(reportFile).size;
    console.log(`report: ${(size / 2 ** 20).toFixed(0)} MB`);
    assert.ok(size > MAX_STRING_LENGTH, `the report is only ${size} bytes`);
    const [head, tail] = ends(reportFile, 400);
    assert.match(head, /^\{\n {2}"dag_id": "dag_nested_outputs",\n.*\n {2}"status": "completed",/);
    // 36 echoes at 0.0001 CU each; the last lines are the totals, the streamed edges and the routing policy, as
    // JSON.stringify ends them.
    assert.match(
      tail,
      /"totals": \{\n {4}"cost_cu": [\d.]+,\n {4}"tokens_used": \d+\n {2}\},\n {2}"streamed_edges": \[\],\n {2}"routing": "cheapest"\n\}\n$/,
    );
    assert.deepEqual(readdirSync(temporary), []);
  },
);
