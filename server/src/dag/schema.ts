// The single structural source of truth for the format: Layer 2 §1 and §3, plus the Layer 1 invoke fields a task
// may carry. Diagnostics (`schema`) and the generated JSON Schema (completion, hover) both come from here.
import { z } from 'zod';

const nonEmpty = z.string();

/** The `type` taxonomy of Layer 2 §1.1 (any string is accepted; these are the ones completion offers). */
export const TYPE_TAXONOMY = ['text', 'json', 'image/png', 'image/jpeg', 'audio/wav', 'binary'] as const;
export const TIERS = ['S', 'A', 'B'] as const;

export const FieldPathSchema = z
  .string()
  .describe(
    'Path into the referenced output `{type, data}`: `data`, then `.member` or `[index]` parts, e.g. `data.chunks[0]` (Layer 2 §3).',
  );

export const SourceSchema = z
  .strictObject({
    from_task: nonEmpty
      .optional()
      .describe('The task_id whose output to reference. Mutually exclusive with `from_tasks`.'),
    from_tasks: z
      .array(nonEmpty)
      .optional()
      .describe(
        'Several task_ids (aggregation): their outputs are passed as an ordered array. Mutually exclusive with `from_task`.',
      ),
    field: FieldPathSchema.optional(),
  })
  .describe('Where the input comes from: another task’s output (Layer 2 §3).');

export const LiteralInputSchema = z
  .strictObject({
    type: z
      .string()
      .describe(
        'MIME-like type: `text`, `json`, `image/png`, `image/jpeg`, `audio/wav`, `binary` (any string is accepted).',
      )
      .meta({ examples: [...TYPE_TAXONOMY] }),
    data: z
      .unknown()
      .refine((value) => value !== undefined, { message: 'missing' })
      .describe('The input payload.'),
  })
  .describe('A literal input: concrete data, used by a DAG root.');

export const ReferenceInputSchema = z
  .strictObject({ source: SourceSchema })
  .describe('An input reference: a pointer to another task’s output, resolved by the orchestrator.');

// The reference form first: most tasks of a DAG read another's output, and a validator that tries the branches in
// order then settles them at the first try.
export const InputSchema = z
  .union([ReferenceInputSchema, LiteralInputSchema])
  .describe('A literal input `{type, data}` or an input reference `{source: {...}}` (Layer 2 §1.1).');

export const MetadataSchema = z
  .looseObject({
    requester: z.string().optional().describe('Who asked for the task, e.g. `agent:hermes-7b:eu-west`.'),
    dag_id: z.string().optional().describe('The DAG this task belongs to; should equal the file’s `dag_id`.'),
    priority: z.string().optional().describe('Scheduling priority, e.g. `normal`.'),
  })
  .describe('Arbitrary key-value metadata. Reserved keys: `requester`, `dag_id`, `priority`.');

export const TaskSchema = z
  .strictObject({
    task_id: z.string().describe('Unique task identifier, of the form `task_<random>`.'),
    capability: z.string().describe('Capability tag matching ARD registry entries, e.g. `sentiment-analysis`.'),
    input: InputSchema,
    output_type: z
      .string()
      .optional()
      .describe('Expected output format. Default: `json`.')
      .meta({ examples: [...TYPE_TAXONOMY] }),
    input_tokens_est: z.int().nonnegative().optional().describe('Buyer’s estimate of input tokens. Informational.'),
    max_price_cu: z.number().nonnegative().optional().describe('Maximum price in CU the buyer will pay for this task.'),
    preferred_tier: z.enum(TIERS).optional().describe('Preferred quality tier (`S`, `A`, `B`). Informational.'),
    metadata: MetadataSchema.optional(),
    timeout_ms: z.int().positive().optional().describe('Hard deadline in milliseconds (Layer 1). Default: 30000.'),
    stream: z.boolean().optional().describe('Ask the provider to stream its output (Layer 1 §7.1).'),
    input_stream: z.boolean().optional().describe('Send the input incrementally (Layer 1 §7.2).'),
    escrow_id: z.string().optional().describe('Reference to a Layer 4 escrow lock.'),
    proof_method: z.string().optional().describe('Requested Layer 3 proof, e.g. `result-hash`.'),
  })
  .describe('An ACMP task (Layer 2 §1).');

export const EdgeSchema = z
  .strictObject({
    from: z.string().describe('task_id of the upstream task.'),
    to: z.string().describe('task_id of the downstream task.'),
    stream_eligible: z
      .boolean()
      .optional()
      .describe('If true, the downstream may start on partial output of `from` (Layer 2 §5). Default: false.'),
  })
  .describe('A data dependency: `to` starts after `from` completed.');

export const DagSchema = z
  .strictObject({
    $schema: z.string().optional(),
    dag_id: z.string().describe('Unique identifier of the DAG, of the form `dag_<random>`.'),
    tasks: z.array(TaskSchema).describe('The tasks of the DAG.'),
    edges: z.array(EdgeSchema).describe('The data dependencies between tasks. May be empty (a batch).'),
  })
  .describe('An ACMP DAG file (Layer 2 §3).');

export type DagFile = z.infer<typeof DagSchema>;
export type Task = z.infer<typeof TaskSchema>;
export type Edge = z.infer<typeof EdgeSchema>;

/** Known property names of each object kind, for messages and completion. */
export const knownProperties = {
  dag: Object.keys(DagSchema.shape),
  task: Object.keys(TaskSchema.shape),
  edge: Object.keys(EdgeSchema.shape),
  source: Object.keys(SourceSchema.shape),
} as const;
