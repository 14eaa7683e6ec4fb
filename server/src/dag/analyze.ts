// The analysis entry point: text in, model and diagnostics out. Pure, total and iterative.
import { type CheckOptions, type ProviderOffers, runChecks } from './checks';
import { type AnalysisLimits, DEFAULT_LIMITS } from '../protocol/limits';
import type { DagDiagnostic } from './diagnostic';
import { JsonDocument, type SyntaxError, lineAndColumnOf, parseJson } from './json';
import { type DagModel, buildModel } from './model';
import { MAX_NESTING, type TooDeep, tooDeepValues } from './nesting';
import { type SchemaProblem, schemaDiagnostics, schemaProblems } from './schemaCheck';

export interface AnalysisOptions {
  readonly limits?: Partial<AnalysisLimits>;
  /** What the providers offer, for no-provider and over-budget; absent when no provider is configured. */
  readonly offers?: ProviderOffers | undefined;
  /**
   * Keep the text's plain value (`DagAnalysis.value`): a run needs the tasks as values, and parsing the text again
   * costs more than keeping them through the checks. Editors keep the analysis and do not ask for it.
   */
  readonly keepValue?: boolean;
}

export interface DagAnalysis {
  /** The text was over `maxFileBytes`: not analysed, one `limit` diagnostic, no tasks. */
  readonly tooLarge: boolean;
  /** The parsed text: nodes and offsets on demand. */
  readonly document: JsonDocument;
  readonly model: DagModel;
  readonly diagnostics: readonly DagDiagnostic[];
  /** The text's plain value (JSON.parse's, or the recovering parser's), when `keepValue` asked for it. */
  readonly value?: unknown;
}

/**
 * Parses, validates and models the text. The plain value lives only in here unless kept, so the checks that follow
 * run without it (collections during the checks no longer copy it: about a tenth off the analysis at 10,000 tasks).
 */
function read(
  text: string,
  keepValue: boolean,
): {
  document: JsonDocument;
  errors: readonly SyntaxError[];
  problems: readonly SchemaProblem[];
  tooDeep: readonly TooDeep[];
  model: DagModel;
  value?: unknown;
} {
  const parsed = parseJson(text);
  const problems = schemaProblems(parsed.value);
  return {
    document: parsed.document,
    errors: parsed.errors,
    problems,
    tooDeep: tooDeepValues(parsed.value, parsed.errors.length === 0 && problems.length === 0),
    model: buildModel(parsed),
    ...(keepValue ? { value: parsed.value } : {}),
  };
}

/** Whether the text takes more than `max` bytes in UTF-8, counted only as far as needed. */
function exceedsBytes(text: string, max: number): boolean {
  // A UTF-16 code unit takes one to three UTF-8 bytes (a surrogate pair four for its two units).
  if (text.length > max) return true;
  if (text.length * 3 <= max) return false;
  let bytes = 0;
  for (let i = 0; i < text.length && bytes <= max; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c < 0xdc00 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes > max;
}

/** The analysis of a text left unanalysed: no tasks, and one diagnostic saying why. */
function unanalysed(text: string, tooLarge: boolean, diagnostic: DagDiagnostic): DagAnalysis {
  // An empty index over the real text, so editor features find nothing rather than index the whole text.
  const document = new JsonDocument(text);
  document.markIndexed();
  return {
    tooLarge,
    document,
    model: buildModel({ document, value: undefined, errors: [] }),
    diagnostics: [diagnostic],
  };
}

/** The analysis of a file too large to analyse: no tasks, and one diagnostic saying so on the first character. */
function tooLarge(text: string, maxFileBytes: number): DagAnalysis {
  const megabytes = (maxFileBytes / (1024 * 1024)).toFixed(1);
  return unanalysed(text, true, {
    code: 'limit',
    severity: 'warning',
    start: 0,
    end: Math.min(1, text.length),
    message: `The file is too large to analyse: it is over ${megabytes} MB, the limit of ${maxFileBytes} bytes (acmp.limits.maxFileBytes), so it gets no other diagnostics. To analyse it, raise acmp.limits.maxFileBytes in the settings.`,
  });
}

/**
 * The analysis of a file that is not UTF-8, whose decoded `text` has its first bad bytes (as U+FFFD) at `offset`: one
 * `json-syntax` error there, and nothing analysed (the replaced text may hold ids that are not the file's).
 */
export function notUtf8Analysis(text: string, offset: number): DagAnalysis {
  const { line, column } = lineAndColumnOf(text, offset);
  return unanalysed(text, false, {
    code: 'json-syntax',
    severity: 'error',
    start: offset,
    end: Math.min(offset + 1, text.length),
    message: `The file is not valid UTF-8: the bytes at line ${line}, column ${column} are no UTF-8 character, so it is not analysed further. Save it as UTF-8.`,
  });
}

export function analyzeDag(text: string, options: AnalysisOptions = {}): DagAnalysis {
  const limits: AnalysisLimits = { ...DEFAULT_LIMITS, ...options.limits };
  if (exceedsBytes(text, limits.maxFileBytes)) return tooLarge(text, limits.maxFileBytes);
  const { document, errors, problems, tooDeep, model, value } = read(text, options.keepValue === true);
  const diagnostics: DagDiagnostic[] = errors.map((error) => ({
    code: 'json-syntax',
    severity: 'error',
    start: error.offset,
    end: error.offset + error.length,
    message: error.message,
  }));
  const checkOptions: CheckOptions = {
    limits,
    offers: options.offers,
  };

  // An input that is both or neither form gets one input-shape diagnostic, not the union's schema issues too.
  const shapeless = new Set(
    model.tasks.filter((task) => task.inputForm === 'both' || task.inputForm === 'neither').map((task) => task.index),
  );
  diagnostics.push(
    ...schemaDiagnostics(
      document,
      problems,
      (path) => path[0] === 'tasks' && path[2] === 'input' && shapeless.has(path[1] as number),
    ),
  );
  for (const { path, depth, owner } of tooDeep) {
    // An error, not the warning of the configured limits: a run cannot take it, whatever the settings.
    const start = document.nodeAt(path)?.offset ?? 0;
    diagnostics.push({
      code: 'limit',
      severity: 'error',
      start,
      end: start + 1,
      message: `${owner.charAt(0).toUpperCase()}${owner.slice(1)} nests ${depth} levels deep here (counted from the top of the file), more than the ${MAX_NESTING} a run can take (its messages to providers and its result-hash proofs are made one level at a time, and would overflow the call stack). Nest this value less deeply.`,
    });
  }
  runChecks(model, checkOptions, (code, severity, node, message, related) => {
    diagnostics.push({
      code,
      severity,
      start: node.offset,
      end: node.offset + node.length,
      message,
      ...(related !== undefined && related.length > 0 ? { related } : {}),
    });
  });
  diagnostics.sort((a, b) => a.start - b.start || a.end - b.end);
  return { tooLarge: false, document, model, diagnostics, ...(value === undefined ? {} : { value }) };
}
