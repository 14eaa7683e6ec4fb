// Conversion of the core's offset diagnostics to LSP diagnostics, shared by the language server and the CLI.
import { type Diagnostic, DiagnosticSeverity } from 'vscode-languageserver-types';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { DagDiagnostic, Severity } from './dag/diagnostic';
import { DIAGNOSTIC_SOURCE } from './protocol/diagnosticSource';
import { spanRange } from './lspRanges';

const severities: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information,
};

export function toLspDiagnostic(document: TextDocument, diagnostic: DagDiagnostic): Diagnostic {
  const range = (start: number, end: number) => spanRange(document, start, end);
  return {
    range: range(diagnostic.start, diagnostic.end),
    severity: severities[diagnostic.severity],
    code: diagnostic.code,
    source: DIAGNOSTIC_SOURCE,
    message: diagnostic.message,
    ...(diagnostic.related === undefined
      ? {}
      : {
          relatedInformation: diagnostic.related.map((related) => ({
            location: { uri: document.uri, range: range(related.start, related.end) },
            message: related.message,
          })),
        }),
  };
}
