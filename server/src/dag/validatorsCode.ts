// Build time: the code that replaces validators.ts in the bundles, ajv's standalone code of the same validators.
import Ajv from 'ajv';
import standaloneCode from 'ajv/dist/standalone';
import { dagJsonSchema } from './jsonSchema';
import { REFERENCE_BRANCH } from './validators';

/** A CommonJS module whose export is the validator ajv compiles with these options. */
export function validatorSource(allErrors: boolean): string {
  const ajv = new Ajv({ allErrors, strict: true, code: { source: true } });
  return standaloneCode(ajv, ajv.compile(dagJsonSchema()));
}

/** The module that stands for validators.ts, importing the two validators' modules from these paths. */
export function validatorsModule(firstProblemPath: string, everyProblemPath: string): string {
  return [
    `import firstProblem from ${JSON.stringify(firstProblemPath)};`,
    `import everyProblem from ${JSON.stringify(everyProblemPath)};`,
    'export const firstProblemValidator = () => firstProblem;',
    'export const everyProblemValidator = () => everyProblem;',
    `export const REFERENCE_BRANCH = ${JSON.stringify(REFERENCE_BRANCH)};`,
  ].join('\n');
}
