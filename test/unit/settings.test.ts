// The settings package.json declares for VS Code and the defaults the server falls back to are the same.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { BUILTIN_CAPABILITIES } from '../../server/src/protocol/builtinCatalog';
import { normalizeSettings } from '../../server/src/protocol/settings';
import { knownCapabilities } from '../../server/src/run/pricing';

const manifest = JSON.parse(readFileSync(resolve(__dirname, '../../package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, { default: unknown }> } };
};
const declared = manifest.contributes.configuration.properties;

/** Every leaf of a settings object, as `acmp.a.b` keys. */
function leaves(value: unknown, prefix: string): [string, unknown][] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [[prefix, value]];
  return Object.entries(value).flatMap(([key, inner]) => leaves(inner, `${prefix}.${key}`));
}

test('each default the server uses is the default package.json declares', () => {
  const defaults = leaves(normalizeSettings({}), 'acmp');
  assert.ok(defaults.length >= 6);
  for (const [key, value] of defaults) {
    assert.ok(Object.hasOwn(declared, key), `package.json declares ${key}`);
    assert.deepEqual(declared[key]!.default, value, key);
  }
});

test('malformed settings fall back to those defaults', () => {
  const settings = normalizeSettings({
    limits: { maxTasks: -1 },
    run: { failurePolicy: 'sometimes', maxConcurrency: 0 },
  });
  assert.equal(settings.limits.maxTasks, declared['acmp.limits.maxTasks']!.default);
  assert.equal(settings.run.failurePolicy, declared['acmp.run.failurePolicy']!.default);
  assert.equal(settings.run.maxConcurrency, declared['acmp.run.maxConcurrency']!.default);
});

test('the capabilities providers offer: unknown when one takes any; the built-in one offers its catalog', () => {
  assert.equal(knownCapabilities([{ id: 'p', transport: 'stdio', command: 'x' }]), undefined);
  assert.deepEqual(
    knownCapabilities([
      { id: 'p', transport: 'stdio', command: 'x', capabilities: ['summarization'] },
      { id: 'q', transport: 'http', url: 'http://q', capabilities: ['ocr', 'summarization'] },
    ]),
    ['summarization', 'ocr'],
  );
  assert.deepEqual(knownCapabilities([{ id: 'b', transport: 'builtin' }]), BUILTIN_CAPABILITIES);
});
