// Waiting for the diagnostics VS Code shows, on its events.
import * as path from 'node:path';
import * as vscode from 'vscode';

/** Resolves with the diagnostics of `uri` once `accept` takes them; fails after `ms` with what was last seen. */
export function diagnosticsWhen(
  uri: vscode.Uri,
  accept: (diagnostics: readonly vscode.Diagnostic[]) => boolean,
  ms = 20_000,
): Promise<readonly vscode.Diagnostic[]> {
  return new Promise((resolve, reject) => {
    const ours = () => vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'acmp-dag');
    const check = (): boolean => {
      const current = ours();
      if (!accept(current)) return false;
      subscription.dispose();
      clearTimeout(timer);
      resolve(current);
      return true;
    };
    const subscription = vscode.languages.onDidChangeDiagnostics((event) => {
      if (event.uris.some((changed) => changed.toString() === uri.toString())) check();
    });
    const timer = setTimeout(() => {
      subscription.dispose();
      const seen = ours().map((d) => `${codeOf(d)}@${d.range.start.line + 1}`);
      reject(
        new Error(`diagnostics of ${path.basename(uri.fsPath)} not as expected after ${ms} ms: ${seen.join(', ')}`),
      );
    }, ms);
    check();
  });
}

export function codeOf(d: vscode.Diagnostic): string {
  return typeof d.code === 'object' ? String(d.code.value) : String(d.code);
}
