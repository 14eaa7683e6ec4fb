// Starts the built language server as a real process and talks LSP to it over stdio.
import { type ChildProcess, spawn } from 'node:child_process';
import { basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
} from 'vscode-jsonrpc/node';
import type { Diagnostic } from 'vscode-languageserver-types';

/** `workspace/didChangeWatchedFiles`: 1 created, 2 changed, 3 deleted. */
export interface FileEvent {
  readonly uri: string;
  readonly type: 1 | 2 | 3;
}

export interface SessionOptions {
  /** A folder on disk, opened as the workspace (`rootUri` and `workspaceFolders` of `initialize`). */
  readonly workspaceFolder?: string;
  /** Lets `heapUsed` ask the server for its heap (node --expose-gc, and an IPC channel beside stdio). */
  readonly heapProbe?: boolean;
  /** Node's arguments that start another server than the bundle (the bench's floor server). */
  readonly server?: readonly string[];
  /** Added to the server's environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** What the client says it can do under `workspace`, besides configuration and workspace folders. */
  readonly workspaceCapabilities?: Readonly<Record<string, unknown>>;
}

export interface PublishDiagnosticsParams {
  readonly uri: string;
  readonly version?: number;
  readonly diagnostics: Diagnostic[];
}

/** The bundle `npm run build` makes; ACMP_SERVER_BUNDLE points elsewhere (a separate build while developing). */
export const SERVER_BUNDLE = process.env.ACMP_SERVER_BUNDLE ?? resolve(__dirname, '../../dist/server.js');

/** Loaded into the server by `heapProbe`: answers each IPC message with its heap in use after a full collection. */
const HEAP_PROBE = `data:text/javascript,${encodeURIComponent(
  "process.on('message', () => { globalThis.gc(); process.send(process.memoryUsage().heapUsed); });",
)}`;

export interface LspSession {
  readonly connection: MessageConnection;
  readonly process: ChildProcess;
  /** Resolves with the next publishDiagnostics for `uri` that satisfies `accept`. */
  diagnostics(uri: string, accept?: (params: PublishDiagnosticsParams) => boolean): Promise<PublishDiagnosticsParams>;
  open(uri: string, text: string, version?: number): Promise<void>;
  change(uri: string, version: number, text: string): Promise<void>;
  close(uri: string): Promise<void>;
  /** What the client's file watcher reports. */
  filesChanged(changes: readonly FileEvent[]): Promise<void>;
  /** Answers workspace/configuration with these settings from now on, and says the configuration changed. */
  configure(configuration: unknown): Promise<void>;
  /** The server's heap in use after a full garbage collection, in bytes (with `heapProbe` only). */
  heapUsed(): Promise<number>;
  stop(): Promise<void>;
}

export async function startLspSession(configuration: unknown = {}, options: SessionOptions = {}): Promise<LspSession> {
  const probe = options.heapProbe === true ? ['--expose-gc', '--import', HEAP_PROBE] : [];
  const child = spawn(process.execPath, [...probe, ...(options.server ?? [SERVER_BUNDLE]), '--stdio'], {
    stdio: ['pipe', 'pipe', 'inherit', ...(probe.length > 0 ? (['ipc'] as const) : [])],
    env: { ...process.env, ...options.env },
  });
  const connection = createMessageConnection(
    new StreamMessageReader(child.stdout!),
    new StreamMessageWriter(child.stdin!),
  );
  const waiters: {
    uri: string;
    accept: (p: PublishDiagnosticsParams) => boolean;
    resolve: (p: PublishDiagnosticsParams) => void;
  }[] = [];
  connection.onNotification('textDocument/publishDiagnostics', (params: PublishDiagnosticsParams) => {
    for (const waiter of [...waiters]) {
      if (waiter.uri === params.uri && waiter.accept(params)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(params);
      }
    }
  });
  let settings = configuration;
  connection.onRequest('workspace/configuration', (params: { items: unknown[] }) => params.items.map(() => settings));
  connection.listen();
  const folder = options.workspaceFolder;
  const folders = folder === undefined ? null : [{ uri: pathToFileURL(folder).href, name: basename(folder) }];
  await connection.sendRequest('initialize', {
    processId: process.pid,
    rootUri: folders?.[0]?.uri ?? null,
    workspaceFolders: folders,
    capabilities: { workspace: { configuration: true, workspaceFolders: true, ...options.workspaceCapabilities } },
  });
  await connection.sendNotification('initialized', {});

  return {
    connection,
    process: child,
    diagnostics: (uri, accept = () => true) => new Promise((resolve) => waiters.push({ uri, accept, resolve })),
    open: (uri, text, version = 1) =>
      connection.sendNotification('textDocument/didOpen', {
        textDocument: { uri, languageId: 'acmp-dag', version, text },
      }),
    change: (uri, version, text) =>
      connection.sendNotification('textDocument/didChange', {
        textDocument: { uri, version },
        contentChanges: [{ text }],
      }),
    close: (uri) => connection.sendNotification('textDocument/didClose', { textDocument: { uri } }),
    filesChanged: (changes) => connection.sendNotification('workspace/didChangeWatchedFiles', { changes }),
    configure: (changed) => {
      settings = changed;
      return connection.sendNotification('workspace/didChangeConfiguration', { settings: null });
    },
    heapUsed: () =>
      new Promise((resolveHeap) => {
        child.once('message', (bytes: number) => resolveHeap(bytes));
        child.send('heap');
      }),
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      await connection.sendRequest('shutdown');
      await connection.sendNotification('exit');
      await exited;
      connection.dispose();
    },
  };
}
