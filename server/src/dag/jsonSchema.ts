// The JSON Schema of the format, generated from the zod schema: it feeds vscode-json-languageservice and ships as
// `dist/acmp-dag.schema.json` for other tools.
import { z } from 'zod';
import { DagSchema } from './schema';

export function dagJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(DagSchema, { target: 'draft-7', unrepresentable: 'any' }),
    $id: 'https://acmp-dag.invalid/acmp-dag.schema.json',
    title: 'ACMP DAG',
  };
}
