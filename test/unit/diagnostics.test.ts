// The analysis core against fixture files with their expected diagnostics: every code fires where it must and
// stays silent on valid input.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { type AnalysisOptions, analyzeDag } from '../../server/src/dag/analyze';
import { DIAGNOSTIC_CODES } from '../../server/src/dag/diagnostic';

const FIXTURES = join(__dirname, '../fixtures/diagnostics');
const names = readdirSync(FIXTURES)
  .filter((file) => file.endsWith('.acmp-dag.json'))
  .map((file) => file.slice(0, -'.acmp-dag.json'.length));

const seen = new Set<string>();

for (const name of names) {
  test(`fixture ${name}`, () => {
    const text = readFileSync(join(FIXTURES, `${name}.acmp-dag.json`), 'utf8');
    const optionsFile = join(FIXTURES, `${name}.options.json`);
    const options = existsSync(optionsFile) ? (JSON.parse(readFileSync(optionsFile, 'utf8')) as AnalysisOptions) : {};
    const expected = JSON.parse(readFileSync(join(FIXTURES, `${name}.expected.json`), 'utf8')) as unknown[];
    const document = TextDocument.create('file:///f', 'acmp-dag', 1, text);
    const { diagnostics } = analyzeDag(text, options);
    for (const d of diagnostics) {
      assert.ok(d.start >= 0 && d.start <= d.end && d.end <= text.length, `${d.code} range inside the text`);
      assert.ok(d.message.length > 10, 'a message that says something');
      for (const related of d.related ?? []) assert.ok(related.end <= text.length);
      seen.add(d.code);
    }
    assert.deepEqual(
      [...diagnostics]
        .sort((a, b) => a.start - b.start || a.end - b.end)
        .map((d) => ({
          code: d.code,
          severity: d.severity,
          line: document.positionAt(d.start).line + 1,
          text: text.slice(d.start, d.end),
        })),
      expected,
    );
  });
}

test('the fixtures exercise every diagnostic code', () => {
  assert.deepEqual(
    DIAGNOSTIC_CODES.filter((code) => !seen.has(code)),
    [],
  );
});

test('messages name the tasks involved', () => {
  const text = readFileSync(join(FIXTURES, 'every-error.acmp-dag.json'), 'utf8');
  const messages = analyzeDag(text).diagnostics.map((d) => `${d.code}: ${d.message}`);
  assert.ok(
    messages.includes(
      messages.find((m) => m.startsWith('cycle') && m.includes('task_split → task_left → task_join → task_split'))!,
    ),
  );
  assert.ok(
    messages.some((m) => m.startsWith('unknown-task') && m.includes('"task_rihgt"') && m.includes('"task_join"')),
  );
  assert.ok(
    messages.some((m) => m.startsWith('missing-edge') && m.includes('{"from": "task_split", "to": "task_split"}')),
  );
});
