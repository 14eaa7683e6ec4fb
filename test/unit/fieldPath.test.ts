import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseFieldPath, resolveFieldPath } from '../../server/src/dag/fieldPath';

test('the Layer 2 path grammar: accepted paths and their segments', () => {
  assert.deepEqual(parseFieldPath('data'), { ok: true, segments: ['data'] });
  assert.deepEqual(parseFieldPath('data.items[0].name'), { ok: true, segments: ['data', 'items', 0, 'name'] });
  assert.deepEqual(parseFieldPath('data[12]._x9'), { ok: true, segments: ['data', 12, '_x9'] });
});

test('rejected paths point at the offending character', () => {
  const offsetOf = (path: string) => {
    const parsed = parseFieldPath(path);
    assert.equal(parsed.ok, false, path);
    return parsed.ok ? -1 : parsed.offset;
  };
  assert.equal(offsetOf('type'), 0);
  assert.equal(offsetOf('database'), 0);
  assert.equal(offsetOf('data.'), 5);
  assert.equal(offsetOf('data.9a'), 5);
  assert.equal(offsetOf('data.items[*]'), 11);
  assert.equal(offsetOf('data.items[-1]'), 11);
  assert.equal(offsetOf('data.items[01]'), 11);
  assert.equal(offsetOf('data.items[0'), 12);
  assert.equal(offsetOf('data..x'), 5);
  assert.equal(offsetOf('data x'), 4);
  assert.equal(offsetOf(''), 0);
  assert.equal(offsetOf('data.items[]'), 11);
  assert.equal(offsetOf('data.items[0]x'), 13);
  assert.equal(offsetOf('data.items[0]]'), 13);
  assert.equal(offsetOf(' data'), 0);
});

test('resolution reads own properties only', () => {
  const output = { type: 'json', data: { items: [{ name: 'a' }] } };
  assert.deepEqual(resolveFieldPath(output, ['data', 'items', 0, 'name']), { found: true, value: 'a' });
  assert.deepEqual(resolveFieldPath(output, ['data', 'items', 1]), { found: false, at: 'data.items[1]' });
  for (const inherited of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
    assert.equal(resolveFieldPath(output, ['data', inherited]).found, false, inherited);
  }
  assert.equal(resolveFieldPath(output, ['data', 'items', 'length']).found, false);
  const parsed = JSON.parse('{"data":{"__proto__":{"x":1}}}') as unknown;
  assert.deepEqual(resolveFieldPath(parsed, ['data', '__proto__', 'x']), { found: true, value: 1 });
});
