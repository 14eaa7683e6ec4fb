// The validators the bundles carry (ajv's standalone code, generated at build time) judge every text as the ones
// compiled at run time do: the same verdict and the same errors, on the diagnostics fixtures and the malformed corpus.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ValidateFunction } from 'ajv';
import { parseJson } from '../../server/src/dag/json';
import { everyProblemValidator, firstProblemValidator } from '../../server/src/dag/validators';
import { validatorSource } from '../../server/src/dag/validatorsCode';
import { malformedCorpus } from '../support/malformedCorpus';

const FIXTURES = join(__dirname, '../fixtures/diagnostics');

/** Evaluates a standalone validator's CommonJS module. */
function loadValidator(source: string): ValidateFunction {
  const module = { exports: {} as ValidateFunction };
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the code under test is generated text
  const evaluate = new Function('module', 'exports', 'require', source) as (
    module: { exports: unknown },
    exports: unknown,
    load: NodeJS.Require,
  ) => void;
  evaluate(module, module.exports, require);
  return module.exports;
}

const texts: [string, string][] = [
  ...readdirSync(FIXTURES)
    .filter((file) => file.endsWith('.acmp-dag.json'))
    .map((file): [string, string] => [file, readFileSync(join(FIXTURES, file), 'utf8')]),
  ...malformedCorpus().map(({ name, text }): [string, string] => [name, text]),
];

for (const [allErrors, compiled] of [
  [false, firstProblemValidator()],
  [true, everyProblemValidator()],
] as const) {
  test(`the standalone ${allErrors ? 'every-problem' : 'first-problem'} validator agrees with the compiled one`, () => {
    const standalone = loadValidator(validatorSource(allErrors));
    let invalid = 0;
    for (const [name, text] of texts) {
      const { value } = parseJson(text);
      const verdict = compiled(value);
      assert.equal(standalone(value), verdict, name);
      assert.deepEqual(standalone.errors ?? null, compiled.errors ?? null, name);
      if (!verdict) invalid++;
    }
    assert.ok(invalid >= 10, `only ${invalid} of the texts have schema problems`);
  });
}
