// The DAG files of the workspace folders, open in the editor or not: their task ids and capabilities, for
// capability completion and workspace symbols. Scanned from disk once after `initialized`, kept current by the
// client's file watcher and its workspace folder changes; open documents are read from the editor instead.
import type { Dirent } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  type Connection,
  type FileEvent,
  FileChangeType,
  type InitializeParams,
  type TextDocuments,
  type WorkspaceFoldersChangeEvent,
} from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Range } from 'vscode-languageserver-types';
import type { AnalysisCache } from './analyses';
import { type DagAnalysis, analyzeDag } from './dag/analyze';
import { decodeFileText } from './fileText';
import { nodeRange } from './lspRanges';

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

const DAG_SUFFIX = '.acmp-dag.json';
/** At most this many files on disk are known, so a huge folder cannot exhaust the server's memory. */
const MAX_WORKSPACE_FILES = 5_000;
/** At most this many folders are read, so a workspace opened on a home folder is not walked for minutes. */
const MAX_WORKSPACE_FOLDERS = 20_000;
/** Larger files are skipped: generated data rather than DAGs a person edits. */
const MAX_WORKSPACE_FILE_BYTES = 5 * 1024 * 1024;

const isSkippedFolder = (name: string): boolean => name === 'node_modules' || name.startsWith('.');

/** The file system path of a `file:` URI, in one spelling whatever the client's URI encoding; else undefined. */
function pathOf(uri: string): string | undefined {
  try {
    return uri.startsWith('file:') ? fileURLToPath(uri) : undefined;
  } catch {
    return undefined;
  }
}

/** The file system paths of the `file:` folders among `folders`. */
const pathsOf = (folders: readonly { uri: string }[]): string[] =>
  folders.map((folder) => pathOf(folder.uri)).filter((path) => path !== undefined);

function summarise(uri: string, document: TextDocument, analysis: DagAnalysis): WorkspaceDagFile {
  const tasks: WorkspaceTask[] = [];
  for (const task of analysis.model.tasks) {
    const idNode = task.idNode;
    if (task.id !== undefined && idNode !== undefined) {
      tasks.push({ id: task.id, capability: task.capability, range: nodeRange(document, idNode) });
    }
  }
  return { uri, dagId: analysis.model.dagId, tasks };
}

/** The summary of a DAG file on disk; undefined when it cannot be read, is too large or is not UTF-8. */
async function readDagFile(path: string): Promise<WorkspaceDagFile | undefined> {
  try {
    if ((await stat(path)).size > MAX_WORKSPACE_FILE_BYTES) return undefined;
    // Without its byte order mark, as the editor shows it: the ranges of its tasks are the editor's.
    const { text, notUtf8At } = decodeFileText(await readFile(path));
    // Its task ids cannot be read for sure: none is offered rather than one with U+FFFD for the bytes.
    if (notUtf8At !== undefined) return undefined;
    const uri = pathToFileURL(path).href;
    return summarise(uri, TextDocument.create(uri, 'acmp-dag', 0, text), analyzeDag(text));
  } catch {
    return undefined;
  }
}

/** The DAG files under the folders, within the bounds: the tree is walked with an explicit stack, not recursion. */
async function findDagFiles(folders: readonly string[]): Promise<string[]> {
  const found = new Set<string>();
  const pending = [...folders];
  let visited = 0;
  for (
    let folder = pending.pop();
    folder !== undefined && found.size < MAX_WORKSPACE_FILES && visited++ < MAX_WORKSPACE_FOLDERS;
    folder = pending.pop()
  ) {
    let entries: Dirent[];
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch {
      continue;
    }
    // Symbolic links are not followed: a link to an ancestor would make the walk endless.
    for (const entry of entries) {
      if (entry.isDirectory() && !isSkippedFolder(entry.name)) pending.push(join(folder, entry.name));
      else if (entry.isFile() && entry.name.endsWith(DAG_SUFFIX) && found.size < MAX_WORKSPACE_FILES) {
        found.add(join(folder, entry.name));
      }
    }
  }
  return [...found];
}

export class WorkspaceDags {
  /** The workspace folders, as file system paths. */
  private folders: readonly string[] = [];
  /** The files on disk as last read, by path. */
  private readonly onDisk = new Map<string, WorkspaceDagFile>();
  /** Open documents' summaries, made once per analysis (that is, per version). */
  private readonly openSummaries = new WeakMap<DagAnalysis, WorkspaceDagFile>();
  /** The first scan, then each batch of watched-file changes, in order: `files()` waits for all of them. */
  private updates: Promise<void>;
  private startScan: () => void = () => undefined;

  constructor(
    private readonly connection: Connection,
    private readonly documents: TextDocuments<TextDocument>,
    private readonly analyses: AnalysisCache,
  ) {
    this.updates = new Promise<void>((resolve) => (this.startScan = resolve)).then(() =>
      this.update(() => this.scan(this.folders)),
    );
  }

  /** Takes the folders to scan from `initialize`: its workspace folders, else its root. */
  setFolders(params: InitializeParams): void {
    this.folders = pathsOf(params.workspaceFolders ?? (params.rootUri ? [{ uri: params.rootUri }] : []));
  }

  /** Follows folders added to and removed from the workspace after the start, after every earlier update. */
  foldersChanged({ added, removed }: WorkspaceFoldersChangeEvent): void {
    this.updates = this.updates.then(() =>
      this.update(async () => {
        const gone = new Set(pathsOf(removed));
        const fresh = pathsOf(added).filter((path) => !this.folders.includes(path));
        this.folders = [...this.folders.filter((path) => !gone.has(path)), ...fresh];
        // A file stays while another folder still holds it.
        for (const path of [...this.onDisk.keys()]) if (!this.isScanned(path)) this.onDisk.delete(path);
        await this.scan(fresh);
      }),
    );
  }

  /** Starts the first scan in the background (after `initialized`). */
  scanInBackground(): void {
    this.startScan();
  }

  /** Applies the client's file watcher events, after the scan and every earlier batch. */
  filesChanged(changes: readonly FileEvent[]): void {
    this.updates = this.updates.then(() => this.update(() => this.apply(changes)));
  }

  /** Every DAG file known: open documents as edited, the others as saved. Resolves after the first scan. */
  async files(): Promise<readonly WorkspaceDagFile[]> {
    await this.updates;
    const open = this.documents.all();
    const openPaths = new Set(open.map((document) => pathOf(document.uri)));
    const saved = [...this.onDisk].filter(([path]) => !openPaths.has(path)).map(([, file]) => file);
    return [...open.map((document) => this.summaryOf(document)), ...saved];
  }

  private summaryOf(document: TextDocument): WorkspaceDagFile {
    const analysis = this.analyses.get(document);
    let summary = this.openSummaries.get(analysis);
    if (summary === undefined) {
      summary = summarise(document.uri, document, analysis);
      this.openSummaries.set(analysis, summary);
    }
    return summary;
  }

  /** Runs one update; a failure is logged and never stops the updates that follow. */
  private async update(run: () => Promise<void>): Promise<void> {
    try {
      await run();
    } catch (error: unknown) {
      this.connection.console.error(`workspace DAG files: ${String(error)}`);
    }
  }

  private async scan(folders: readonly string[]): Promise<void> {
    for (const path of await findDagFiles(folders)) {
      if (this.onDisk.has(path) || this.onDisk.size < MAX_WORKSPACE_FILES) await this.read(path);
    }
  }

  private async apply(changes: readonly FileEvent[]): Promise<void> {
    for (const change of changes) {
      const path = pathOf(change.uri);
      if (path === undefined) continue;
      if (change.type === FileChangeType.Deleted) {
        // A deleted folder may come as one event for the folder.
        for (const known of [...this.onDisk.keys()]) {
          if (known === path || known.startsWith(path + sep)) this.onDisk.delete(known);
        }
      } else if (this.isScanned(path) && (this.onDisk.has(path) || this.onDisk.size < MAX_WORKSPACE_FILES)) {
        await this.read(path);
      }
    }
  }

  private async read(path: string): Promise<void> {
    const file = await readDagFile(path);
    if (file === undefined) this.onDisk.delete(path);
    else this.onDisk.set(path, file);
  }

  /** Whether the scan would have found the file at `path` (the watcher also reports files it skips). */
  private isScanned(path: string): boolean {
    return (
      path.endsWith(DAG_SUFFIX) &&
      this.folders.some((folder) => {
        const inside = relative(folder, path);
        if (inside === '' || inside === '..' || inside.startsWith('..' + sep) || isAbsolute(inside)) return false;
        return inside
          .split(sep)
          .slice(0, -1)
          .every((name) => !isSkippedFolder(name));
      })
    );
  }
}
