// The syntax tree has two producers: the fast path (JSON.parse, offsets indexed on demand) for valid text and the
// recovering parser for the rest. Both must give the tree that jsonc-parser's parseTree gives, and the value that
// JSON.parse gives, on any valid text.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { type Node as JsoncNode, parseTree } from 'jsonc-parser';
import { analyzeDag } from '../../server/src/dag/analyze';
import { type JsonNode, parseJson } from '../../server/src/dag/json';

/** Deterministic pseudo-random numbers (a 32-bit LCG), so a failure can be replayed from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const KEYS = ['task_id', 'data', 'a', '', '__proto__', 'constructor', 'ünï', 'tab\there', 'quote"d', 'slash\\'];
const STRINGS = ['', 'x', 'é€😀', 'line\nbreak', 'back\\slash', '"quoted"', '\u0001', 'task_000001', '/'];
const NUMBERS = ['0', '-1', '3.25', '1e3', '-2.5E-3', '12345678901234567890'];

/** A random JSON text with escapes, duplicate keys, every kind of value and varied whitespace. */
function randomJson(next: () => number, depth = 0): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const space = () => pick(['', ' ', '\n  ', '\t', '\r\n']);
  const roll = next();
  if (depth < 4 && roll < 0.25) {
    const count = Math.floor(next() * 5);
    // A duplicate key now and then: the last one wins, as in JSON.parse.
    const members = Array.from(
      { length: count },
      () => `${space()}${JSON.stringify(pick(KEYS))}${space()}:${space()}${randomJson(next, depth + 1)}${space()}`,
    );
    return `{${members.join(',')}}`;
  }
  if (depth < 4 && roll < 0.45) {
    const count = Math.floor(next() * 5);
    return `[${Array.from({ length: count }, () => `${space()}${randomJson(next, depth + 1)}${space()}`).join(',')}]`;
  }
  if (roll < 0.65) {
    const text = pick(STRINGS);
    // Escapes written out where JSON.stringify would not: \u sequences and an escaped slash.
    return next() < 0.3
      ? `"${[...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`
      : JSON.stringify(text).replace('/', '\\/');
  }
  if (roll < 0.85) return pick(NUMBERS);
  return pick(['true', 'false', 'null']);
}

/** Our node against jsonc-parser's: kinds, offsets, lengths, keys and scalar values, iteratively. */
function assertSameTree(ours: JsonNode | undefined, theirs: JsoncNode | undefined, text: string): void {
  const pending: [JsonNode | undefined, JsoncNode | undefined][] = [[ours, theirs]];
  while (pending.length > 0) {
    const [a, b] = pending.pop()!;
    assert.ok(a !== undefined && b !== undefined, `a node is missing in ${text}`);
    assert.equal(a.kind, b.type, text);
    assert.deepEqual([a.offset, a.length], [b.offset, b.length], `${a.kind} in ${text}`);
    if (a.kind === 'object') {
      const properties = b.children ?? [];
      assert.equal(a.properties.length, properties.length, text);
      a.properties.forEach((property, i) => {
        const [key, value] = properties[i]!.children!;
        assert.equal(property.key.value, key!.value, text);
        assert.deepEqual([property.key.offset, property.key.length], [key!.offset, key!.length], text);
        pending.push([property.value, value]);
      });
    } else if (a.kind === 'array') {
      assert.equal(a.items.length, (b.children ?? []).length, text);
      a.items.forEach((item, i) => pending.push([item, b.children![i]]));
    } else {
      assert.equal(a.value, b.value, text);
    }
  }
}

test('valid text: both parsers give jsonc-parser’s tree and JSON.parse’s value', () => {
  for (let seed = 1; seed <= 400; seed++) {
    const text = randomJson(random(seed));
    const fast = parseJson(text);
    assert.deepEqual(fast.errors, [], text);
    assert.deepEqual(fast.value, JSON.parse(text), text);
    assertSameTree(fast.document.root, parseTree(text), text);

    // A trailing comment makes JSON.parse refuse the text: the recovering parser takes it, and reports only that.
    const recovered = parseJson(`${text}\n// a comment`);
    assert.equal(recovered.errors.length, 1, text);
    assert.match(recovered.errors[0]!.message, /Comments are not allowed/);
    assert.deepEqual(recovered.value, JSON.parse(text), text);
    assertSameTree(recovered.document.root, parseTree(text), text);
  }
});

test('nodeAt follows property names and indexes, the last duplicate key winning', () => {
  const text = '{"tasks": [{"task_id": "a"}, {"task_id": "b", "task_id": "c"}], "x\\u0041": 1}';
  for (const parsed of [parseJson(text), parseJson(`${text} // recovering`)]) {
    const { document } = parsed;
    const id = document.nodeAt(['tasks', 1, 'task_id']);
    assert.deepEqual(id?.kind === 'string' && [id.value, text.slice(id.offset, id.offset + id.length)], ['c', '"c"']);
    assert.equal(document.nodeAt(['xA'])?.value, 1);
    assert.equal(document.nodeAt(['tasks', 2]), undefined);
    assert.equal(document.nodeAt(['tasks', 'task_id']), undefined);
  }
});

test('the offsets of valid text nested 50,000 deep are indexed without touching the call stack', () => {
  const depth = 50_000;
  const text = `{"data":${'['.repeat(depth)}7${']'.repeat(depth)}}`;
  const { document, errors } = parseJson(text);
  assert.deepEqual(errors, []);
  let node = document.nodeAt(['data']);
  for (let level = 0; level < depth; level++) node = node?.kind === 'array' ? node.items[0] : undefined;
  assert.deepEqual(node && { kind: node.kind, offset: node.offset, value: node.value }, {
    kind: 'number',
    offset: 8 + depth,
    value: 7,
  });
});

test('a key typed without a value yet is present in the value, as undefined', () => {
  const { value, errors } = parseJson('{"source": }');
  assert.equal(errors.length, 1);
  assert.ok(typeof value === 'object' && value !== null && 'source' in value);
  assert.equal((value as { source?: unknown }).source, undefined);
});

test('a value recovery leaves where a key belongs is skipped by every reader of the tape', () => {
  // Found by the language server's survival run: a `]` typed over the end of a task, so the next task's object lands
  // where a key belongs. The plain value, the nodes and the checks must all ignore it, and nothing may throw.
  const pipeline = readFileSync(resolve(__dirname, '../../examples/text-pipeline.acmp-dag.json'), 'utf8');
  const at = pipeline.indexOf('"input_tokens_est": 200\n    },\n    {\n      "task_id": "task_agg_03"') + 11;
  const text = pipeline.slice(0, at) + ']' + pipeline.slice(at + 19);
  const parsed = parseJson(text);
  assert.ok(!JSON.stringify(parsed.value).includes('"undefined"'), 'no member named after a missing key');
  assert.ok(analyzeDag(text).diagnostics.some((d) => d.code === 'json-syntax'));
  // The same splice everywhere in the file.
  for (let offset = 0; offset < pipeline.length; offset++) {
    for (const spliced of [']', '"\\u12', '{'])
      analyzeDag(pipeline.slice(0, offset) + spliced + pipeline.slice(offset + 19));
  }
});
