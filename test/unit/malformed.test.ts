// Malformed and oversized files: the analysis answers each with diagnostics inside the text, and never crashes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { analyzeDag } from '../../server/src/dag/analyze';
import { DEFAULT_LIMITS } from '../../server/src/protocol/limits';
import type { DagDiagnostic } from '../../server/src/dag/diagnostic';
import { BASE_DAG, malformedCorpus } from '../support/malformedCorpus';

const isJson = (text: string): boolean => {
  try {
    // A leading byte order mark is accepted, as JSON.parse users strip it.
    JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    return true;
  } catch {
    return false;
  }
};

/** The spans of a diagnostic (its own and its related ones) that fall outside a text of `length`. */
const outside = (diagnostic: DagDiagnostic, length: number): string[] =>
  [diagnostic, ...(diagnostic.related ?? [])]
    .filter((span) => !(span.start >= 0 && span.start <= span.end && span.end <= length))
    .map((span) => `${diagnostic.code} ${span.start}..${span.end}`);

describe('the malformed corpus', () => {
  const corpus = malformedCorpus();

  test('has at least 200 texts', () => {
    assert.ok(corpus.length >= 200, `${corpus.length} texts`);
  });

  test('every text gets diagnostics inside it, a syntax error where it is not JSON', () => {
    for (const { name, text } of corpus) {
      const { diagnostics } = analyzeDag(text);
      assert.ok(diagnostics.length > 0, `${name}: no diagnostics`);
      assert.deepEqual(
        diagnostics.flatMap((d) => outside(d, text.length)),
        [],
        name,
      );
      if (!isJson(text)) {
        assert.ok(
          diagnostics.some((d) => d.code === 'json-syntax'),
          `${name}: not JSON, yet no json-syntax among ${diagnostics.map((d) => d.code).join(', ')}`,
        );
      }
    }
  });
});

describe('the file size limit (acmp.limits.maxFileBytes)', () => {
  const limitOnly = (text: string, maxFileBytes: number): DagDiagnostic[] =>
    analyzeDag(text, { limits: { maxFileBytes } }).diagnostics.filter((d) => d.code === 'limit');

  test('a file over the limit gets one diagnostic on its first character, saying how to raise it', () => {
    const broken = BASE_DAG.replace('"tasks":', '"tasks" [,');
    const analysis = analyzeDag(broken, { limits: { maxFileBytes: 100 } });
    assert.equal(analysis.diagnostics.length, 1);
    const [diagnostic] = analysis.diagnostics;
    assert.equal(diagnostic!.code, 'limit');
    assert.deepEqual([diagnostic!.start, diagnostic!.end], [0, 1]);
    assert.match(diagnostic!.message, /too large to analyse/);
    assert.match(diagnostic!.message, /raise acmp\.limits\.maxFileBytes/);
    assert.deepEqual(analysis.model.tasks, []);
    assert.equal(analysis.document.root, undefined);
  });

  test('the limit counts UTF-8 bytes: a file exactly at it is analysed, one byte more is not', () => {
    const text = BASE_DAG.replace('One. Two.', 'Ünïcödé 😀 ✓');
    const bytes = new TextEncoder().encode(text).length;
    assert.ok(bytes > text.length);
    assert.deepEqual(analyzeDag(text, { limits: { maxFileBytes: bytes } }).diagnostics, []);
    assert.equal(limitOnly(text, bytes - 1).length, 1);
    assert.equal(limitOnly(`${text}\uD800`, bytes + 2).length, 1, 'a lone surrogate takes three bytes');
  });

  test('the default limit is 20 MB', () => {
    assert.equal(DEFAULT_LIMITS.maxFileBytes, 20 * 1024 * 1024);
    const text = `${BASE_DAG}${' '.repeat(DEFAULT_LIMITS.maxFileBytes - BASE_DAG.length)}`;
    assert.deepEqual(analyzeDag(text).diagnostics, []);
    assert.equal(analyzeDag(`${text} `).diagnostics[0]?.code, 'limit');
  });
});
