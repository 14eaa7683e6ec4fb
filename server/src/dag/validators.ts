// The compiled validators of the DAG's JSON Schema and the facts of the schema that reading their errors needs.
// Here they are compiled from the zod schema at first use (some tens of milliseconds, and zod and ajv's compiler
// loaded), which is what tests running the TypeScript sources get; the bundles replace this module with the code
// validatorsCode.ts generates at build time (esbuild.mjs), so the server and the CLI compile nothing.
import Ajv, { type ValidateFunction } from 'ajv';
import { dagJsonSchema } from './jsonSchema';
import { InputSchema, ReferenceInputSchema } from './schema';

let firstProblem: ValidateFunction | undefined;
let everyProblem: ValidateFunction | undefined;

/** A validator that stops at the first problem. */
export function firstProblemValidator(): ValidateFunction {
  firstProblem ??= new Ajv({ allErrors: false, strict: true }).compile(dagJsonSchema());
  return firstProblem;
}

/** A validator that reports every problem. */
export function everyProblemValidator(): ValidateFunction {
  everyProblem ??= new Ajv({ allErrors: true, strict: true }).compile(dagJsonSchema());
  return everyProblem;
}

/** The branch of the input union (its index, as in a schema path) that holds the reference form. */
export const REFERENCE_BRANCH = String(InputSchema.options.indexOf(ReferenceInputSchema));
