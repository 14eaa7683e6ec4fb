// Rename of a task id from any of its places: the declaration, every edge end and every reference change together.
import { LSPErrorCodes, ResponseError, type TextEdit, type WorkspaceEdit } from 'vscode-languageserver';
import { dagIndex } from '../dag/dagIndex';
import type { StringNode } from '../dag/json';
import type { DagModel } from '../dag/model';
import { nodeRange } from '../protocol/ranges';
import type { Feature } from './feature';
import { taskIdAt } from './navigation';

/** LSP's RequestFailed: the client shows the message. */
const REQUEST_FAILED = LSPErrorCodes.RequestFailed;

/** Why `name` cannot be a task id, or undefined when it can. */
export function invalidTaskId(name: string, previous: string): string | undefined {
  if (name.length === 0) return 'A task id cannot be empty.';
  // Printable, no spaces or quotes, so the id reads the same everywhere it is written (logs, CLI, reports).
  if (!/^[\p{L}\p{N}_.:\-/@]+$/u.test(name)) {
    return `${JSON.stringify(name)} is not a valid task id: use letters, digits and _ . : - / @ only.`;
  }
  if (previous.startsWith('task_') && !(name.startsWith('task_') && name.length > 'task_'.length)) {
    return `${JSON.stringify(name)} is not of the form task_<random> (Layer 2 §1).`;
  }
  return undefined;
}

/**
 * The places that renaming the task id `id` to `newName` rewrites, in text order (the declaration, every edge end
 * and every reference), or why it cannot be renamed so.
 */
export function renamePlaces(model: DagModel, id: string, newName: string): StringNode[] | string {
  const invalid = invalidTaskId(newName, id);
  if (invalid !== undefined) return invalid;
  const other = model.taskById.get(newName);
  if (other !== undefined) {
    return `Task #${other.index + 1} already has the id ${JSON.stringify(newName)}: task ids must be unique.`;
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
      const found = taskIdAt(context, textDocument.uri, position);
      if (found === undefined) {
        throw new ResponseError(REQUEST_FAILED, 'Only a task id can be renamed here: place the cursor on a task id.');
      }
      const declaration = found.analysis.model.taskById.get(found.id);
      if (declaration === undefined) {
        throw new ResponseError(REQUEST_FAILED, `No task declares ${JSON.stringify(found.id)}: nothing to rename.`);
      }
      const site = dagIndex(found.analysis.model)
        .occurrences(found.id)
        .find((occurrence) => {
          const offset = found.document.offsetAt(position);
          return occurrence.node.offset <= offset && offset <= occurrence.node.offset + occurrence.node.length;
        });
      // The id without its quotes, as the user edits it.
      const node = site?.node ?? declaration.idNode!;
      const range = nodeRange(found.document, { offset: node.offset + 1, length: Math.max(0, node.length - 2) });
      return { range, placeholder: found.id };
    });

    connection.onRenameRequest(({ textDocument, position, newName }): WorkspaceEdit => {
      const found = taskIdAt(context, textDocument.uri, position);
      if (found === undefined) throw new ResponseError(REQUEST_FAILED, 'There is no task id here to rename.');
      if (newName === found.id) return { changes: {} };
      const places = renamePlaces(found.analysis.model, found.id, newName);
      if (typeof places === 'string') throw new ResponseError(REQUEST_FAILED, places);
      const newText = JSON.stringify(newName);
      const edits: TextEdit[] = places.map((node) => ({ range: nodeRange(found.document, node), newText }));
      return { changes: { [textDocument.uri]: edits } };
    });
  },
};
