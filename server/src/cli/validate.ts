// `acmp-dag validate`: the analysis for terminals and CI, as text, JSON or SARIF. Exit codes (design.md §7): 0 no
// errors, 1 errors, 2 usage, 3 a file was not checked (too large to analyse, or unreadable): a check that left a file
// out must not pass a CI step, and says so apart from errors found.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Diagnostic, Range } from 'vscode-languageserver-types';
import type { DagAnalysis } from '../dag/analyze';
import { toLspDiagnostic } from '../lspDiagnostics';
import { DIAGNOSTIC_CODES, DIAGNOSTIC_DESCRIPTIONS } from '../dag/diagnostic';
import { analyzeFileText } from '../fileText';
import type { ProviderOffers } from '../dag/checks';
import { providerOffers } from '../providerOffers';
import { loadMarket } from './providersFile';
import { UsageError, readInputFile } from './usage';
import { VERSION } from './version';

export interface FileResult {
  readonly file: string;
  readonly uri: string;
  readonly diagnostics: readonly Diagnostic[];
  readonly analysis: DagAnalysis;
}

/** A file named but not checked, and why. */
export interface NotChecked {
  readonly file: string;
  readonly reason: string;
}

/** The exit code of a check that left a file out. */
export const NOT_CHECKED_EXIT = 3;

const severityName = ['', 'error', 'warning', 'information', 'hint'] as const;

/** The analysis of a file's text as the CLI reports it: LSP diagnostics, positions counted from the text. */
export function fileResult(file: string, text: string, analysis: DagAnalysis): FileResult {
  const uri = pathToFileURL(resolve(file)).href;
  const document = TextDocument.create(uri, 'acmp-dag', 1, text);
  return {
    file,
    uri,
    diagnostics: analysis.diagnostics.map((diagnostic) => toLspDiagnostic(document, diagnostic)),
    analysis,
  };
}

export function validateFile(file: string, offers: ProviderOffers | undefined): FileResult {
  const text = readInputFile(file);
  return fileResult(file, text.text, analyzeFileText(text, { offers }));
}

/** Why a checked file counts as not checked: it was too large to analyse. */
const tooLargeReason = (result: FileResult): string | undefined =>
  result.analysis.tooLarge ? 'too large to analyse (over acmp.limits.maxFileBytes)' : undefined;

/** The file as the user named it when `uri` is the checked file (related information points into it), else `uri`. */
const fileNamed = ({ file, uri }: FileResult, other: string): string => (other === uri ? file : other);

/** `line:col`, 1-based, as editors and compilers print places. */
const lineColumn = ({ start }: Range): string => `${start.line + 1}:${start.character + 1}`;

const messageText = (d: Diagnostic): string => (typeof d.message === 'string' ? d.message : d.message.value);

export function formatText(results: readonly FileResult[], notChecked: readonly NotChecked[] = []): string {
  const lines: string[] = [];
  for (const result of results) {
    for (const d of result.diagnostics) {
      lines.push(
        `${result.file}:${lineColumn(d.range)} ${severityName[d.severity ?? 1]} ${String(d.code)} ${messageText(d)}`,
      );
      for (const { location, message } of d.relatedInformation ?? []) {
        lines.push(`  related: ${fileNamed(result, location.uri)}:${lineColumn(location.range)} ${message}`);
      }
    }
  }
  const count = (severity: number) =>
    results.reduce((n, r) => n + r.diagnostics.filter((d) => d.severity === severity).length, 0);
  for (const { file, reason } of notChecked) lines.push(`${file}: not checked: ${reason}`);
  const checked = results.length - results.filter((result) => result.analysis.tooLarge).length;
  lines.push(
    `${checked} file(s) checked: ${count(1)} error(s), ${count(2)} warning(s), ${count(3)} information.` +
      (notChecked.length > 0 ? ` ${notChecked.length} file(s) not checked.` : ''),
  );
  return lines.join('\n');
}

/** A SARIF 2.1.0 physicalLocation: the file with forward slashes, the region 1-based. */
const physicalLocation = (file: string, range: Range) => ({
  artifactLocation: { uri: file.split('\\').join('/') },
  region: {
    startLine: range.start.line + 1,
    startColumn: range.start.character + 1,
    endLine: range.end.line + 1,
    endColumn: range.end.character + 1,
  },
});

function formatSarif(results: readonly FileResult[], notChecked: readonly NotChecked[]): unknown {
  const level = { 1: 'error', 2: 'warning', 3: 'note', 4: 'note' } as const;
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'acmp-dag',
            version: VERSION,
            rules: DIAGNOSTIC_CODES.map((code) => ({
              id: code,
              shortDescription: { text: DIAGNOSTIC_DESCRIPTIONS[code] },
            })),
          },
        },
        invocations: [
          {
            executionSuccessful: notChecked.length === 0,
            toolExecutionNotifications: notChecked.map(({ file, reason }) => ({
              level: 'error',
              message: { text: `not checked: ${reason}` },
              locations: [{ physicalLocation: { artifactLocation: { uri: file.split('\\').join('/') } } }],
            })),
          },
        ],
        results: results.flatMap((result) =>
          result.diagnostics.map((d) => ({
            ruleId: String(d.code),
            ruleIndex: DIAGNOSTIC_CODES.indexOf(d.code as (typeof DIAGNOSTIC_CODES)[number]),
            level: level[d.severity ?? 1],
            message: { text: messageText(d) },
            locations: [{ physicalLocation: physicalLocation(result.file, d.range) }],
            ...(d.relatedInformation === undefined
              ? {}
              : {
                  relatedLocations: d.relatedInformation.map(({ location, message }, id) => ({
                    id,
                    physicalLocation: physicalLocation(fileNamed(result, location.uri), location.range),
                    message: { text: message },
                  })),
                }),
          })),
        ),
      },
    ],
  };
}

export async function validate(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      format: { type: 'string', default: 'text' },
      providers: { type: 'string' },
      catalog: { type: 'string', multiple: true },
    },
  });
  const format = values.format;
  if (format !== 'text' && format !== 'json' && format !== 'sarif') throw new UsageError(`unknown format "${format}"`);
  if (positionals.length === 0) throw new UsageError('validate needs at least one FILE');
  const market = await loadMarket({ providersFile: values.providers, catalogs: values.catalog ?? [] });
  for (const warning of market.warnings) process.stderr.write(`acmp-dag: warning: ${warning}\n`);
  const offers = providerOffers(market.providers);
  const results: FileResult[] = [];
  const unreadable: NotChecked[] = [];
  for (const file of positionals) {
    try {
      results.push(validateFile(file, offers));
    } catch (error) {
      // One file that cannot be read leaves the others to check.
      if (!(error instanceof UsageError)) throw error;
      unreadable.push({ file, reason: error.message });
      process.stderr.write(`acmp-dag: ${error.message}; not checked\n`);
    }
  }
  const notChecked = [
    ...results.flatMap((result) => {
      const reason = tooLargeReason(result);
      return reason === undefined ? [] : [{ file: result.file, reason }];
    }),
    ...unreadable,
  ];
  const output =
    format === 'text'
      ? formatText(results, notChecked)
      : JSON.stringify(
          format === 'json'
            ? [
                ...results.map((result) => {
                  const reason = tooLargeReason(result);
                  return {
                    file: result.file,
                    diagnostics: result.diagnostics,
                    ...(reason === undefined ? {} : { notChecked: reason }),
                  };
                }),
                ...unreadable.map(({ file, reason }) => ({ file, diagnostics: [], notChecked: reason })),
              ]
            : formatSarif(results, notChecked),
          null,
          2,
        );
  process.stdout.write(output + '\n');
  if (notChecked.length > 0) return NOT_CHECKED_EXIT;
  return results.some((r) => r.diagnostics.some((d) => d.severity === 1)) ? 1 : 0;
}
