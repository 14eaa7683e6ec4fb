// Rename of a task id from any of its places: the declaration, every edge end and every reference change together.
import { LSPErrorCodes, ResponseError, type TextEdit, type WorkspaceEdit } from 'vscode-languageserver';
import type { Position } from 'vscode-languageserver-textdocument';
import type { DagAnalysis } from '../dag/analyze';
import { dagIndex } from '../dag/dagIndex';
import { type StringNode, lineAndColumnOf } from '../dag/json';
import { nodeRange } from '../lspRanges';
import type { Feature, FeatureContext } from './feature';
import { taskIdAt } from './navigation';

/**
 * Refuses the request with `reason`. RequestFailed is what vscode-languageclient turns into the message of the rename
 * box, without a notification (it logs rename failures to its output channel only).
 */
function refuse(reason: string): never {
  throw new ResponseError(LSPErrorCodes.RequestFailed, reason);
}

const quoted = (id: string): string => JSON.stringify(id);

/** The declared task id at `position` with its analysis, or a refusal saying why there is none to rename. */
function declaredTaskIdAt(context: FeatureContext, uri: string, position: Position) {
  const found = taskIdAt(context, uri, position);
  if (found === undefined) {
    refuse(
      'Only a task id can be renamed: place the cursor on a task_id, an edge end, a from_task or a from_tasks element.',
    );
  }
  const declaration = found.analysis.model.taskById.get(found.id);
  if (declaration === undefined) {
    refuse(
      `No task declares ${quoted(found.id)}, so there is nothing to rename: fix this id or declare the task first.`,
    );
  }
  return { ...found, declaration };
}

/** Why `name` cannot be a task id where `previous` is one, as the end of a sentence; undefined when it can. */
export function invalidTaskId(name: string, previous: string): string | undefined {
  if (name.length === 0) return 'a task id needs at least one character.';
  // Printable, no spaces or quotes, so the id reads the same everywhere it is written (logs, CLI, reports).
  if (!/^[\p{L}\p{N}_.:\-/@]+$/u.test(name)) {
    return 'a task id has letters, digits and _ . : - / @ only (no spaces, quotes or backslashes).';
  }
  if (previous.startsWith('task_') && !(name.startsWith('task_') && name.length > 'task_'.length)) {
    return 'task ids are of the form task_<random> (Layer 2 §1).';
  }
  return undefined;
}

/**
 * The places that renaming the task id `id` to `newName` rewrites, in text order (the declaration, every edge end
 * and every reference), or why it cannot be renamed so, as the end of a sentence.
 */
export function renamePlaces(analysis: DagAnalysis, id: string, newName: string): StringNode[] | string {
  const { model, document } = analysis;
  const invalid = invalidTaskId(newName, id);
  if (invalid !== undefined) return invalid;
  const holder = model.taskById.get(newName);
  if (holder !== undefined) {
    const { line } = lineAndColumnOf(document.text, holder.idNode!.offset);
    return `task #${holder.index + 1} (line ${line}) already has that id, and task ids must be unique.`;
  }
  return dagIndex(model)
    .occurrences(id)
    .sort((a, b) => a.node.offset - b.node.offset)
    .map((occurrence) => occurrence.node);
}

export const renameFeature: Feature = {
  capabilities: { renameProvider: { prepareProvider: true } },
  register(context) {
    const { connection } = context;

    connection.onPrepareRename(({ textDocument, position }) => {
      const found = declaredTaskIdAt(context, textDocument.uri, position);
      const offset = found.document.offsetAt(position);
      const site = dagIndex(found.analysis.model)
        .occurrences(found.id)
        .find(({ node }) => node.offset <= offset && offset <= node.offset + node.length);
      // The id without its quotes, as the user edits it.
      const node = site?.node ?? found.declaration.idNode!;
      const range = nodeRange(found.document, { offset: node.offset + 1, length: Math.max(0, node.length - 2) });
      return { range, placeholder: found.id };
    });

    connection.onRenameRequest(({ textDocument, position, newName }): WorkspaceEdit => {
      const found = declaredTaskIdAt(context, textDocument.uri, position);
      if (newName === found.id) return { changes: {} };
      const places = renamePlaces(found.analysis, found.id, newName);
      if (typeof places === 'string') {
        refuse(`Cannot rename ${quoted(found.id)} to ${newName === '' ? 'an empty id' : quoted(newName)}: ${places}`);
      }
      const newText = quoted(newName);
      const edits: TextEdit[] = places.map((node) => ({ range: nodeRange(found.document, node), newText }));
      return { changes: { [textDocument.uri]: edits } };
    });
  },
};
