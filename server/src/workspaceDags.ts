// The DAG files of the workspace folders, open in the editor or not: their task ids and capabilities, for
// capability completion and workspace symbols. PLACEHOLDER: the scan is being written (issue 4).
import type { Range } from 'vscode-languageserver-types';

export interface WorkspaceTask {
  readonly id: string;
  readonly capability: string | undefined;
  /** The range of the task's `task_id` value. */
  readonly range: Range;
}

export interface WorkspaceDagFile {
  readonly uri: string;
  readonly dagId: string | undefined;
  readonly tasks: readonly WorkspaceTask[];
}

export class WorkspaceDags {
  /** Every DAG file known: open documents as edited, the others as saved. */
  files(): Promise<readonly WorkspaceDagFile[]> {
    return Promise.resolve([]);
  }
}
