// What the built-in provider offers, declared once: its capabilities, what each takes and the shape of what each
// returns. The editor completes and explains field paths from these shapes before any run; the provider's own
// tests hold its real outputs to them.
import type { TaskOutput } from './report';

export interface BuiltinCapability {
  readonly description: string;
  readonly input: string;
  /** What one task costs, in CU: a fixed price per task, which it quotes and charges. */
  readonly priceCu: number;
  /** An output as the capability returns it: its members and their types are the documented shape. */
  readonly exampleOutput: TaskOutput | 'the input';
}

export const BUILTIN_CATALOG = {
  'text-split': {
    description: 'Splits a text into sentence-aligned chunks.',
    input: '`text` (a string), or `json` whose data is a string',
    priceCu: 0.001,
    exampleOutput: {
      type: 'json',
      data: { chunks: ['The product quality has declined.', 'Support was friendly and fast.'], count: 2 },
    },
  },
  'sentiment-analysis': {
    description: 'Scores the sentiment of a text with the AFINN-165 lexicon.',
    input: '`text`, or a `{type, data}` output whose data is a string',
    priceCu: 0.002,
    exampleOutput: {
      type: 'json',
      data: { label: 'positive', score: 3, comparative: 0.6, positive: ['friendly', 'fast'], negative: [] },
    },
  },
  'result-aggregation': {
    description: 'Aggregates sentiment results (`from_tasks`) into one verdict.',
    input: '`json`: an array of sentiment outputs',
    priceCu: 0.001,
    exampleOutput: {
      type: 'json',
      data: {
        label: 'neutral',
        score: 0,
        comparative: 0,
        count: 2,
        results: [
          { label: 'negative', score: -3, comparative: -0.6 },
          { label: 'positive', score: 3, comparative: 0.6 },
        ],
      },
    },
  },
  echo: {
    description: 'Returns its input unchanged.',
    input: 'anything',
    priceCu: 0.0001,
    exampleOutput: 'the input',
  },
} as const satisfies Record<string, BuiltinCapability>;

export type BuiltinCapabilityName = keyof typeof BUILTIN_CATALOG;

/** The capabilities of the built-in provider, which serves a run when no provider is configured. */
export const BUILTIN_CAPABILITIES = Object.keys(BUILTIN_CATALOG) as readonly BuiltinCapabilityName[];

export const builtinCapability = (name: string): BuiltinCapability | undefined =>
  Object.hasOwn(BUILTIN_CATALOG, name) ? BUILTIN_CATALOG[name as BuiltinCapabilityName] : undefined;
