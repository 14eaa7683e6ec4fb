// The graph webview's page and the messages between it and the extension. No `vscode` import: the page script and
// the unit tests use this file too.
import type { DagGraph } from '../../server/src/protocol/run';
import type { TaskState } from '../../server/src/run/types';

/** What the extension tells the page. */
export type ToGraphPage =
  /** `stale`: the text does not parse now, and this is the last graph that did. */
  | { readonly type: 'graph'; readonly graph: DagGraph; readonly stale: boolean }
  /** The run states of every task (a run started, or the page was loaded again); tasks not named have none. */
  | { readonly type: 'states'; readonly states: Readonly<Record<string, TaskState>> }
  | { readonly type: 'state'; readonly taskId: string; readonly state: TaskState }
  /** The task whose object holds the editor's cursor. */
  | { readonly type: 'cursor'; readonly taskId: string | undefined };

/** What the page tells the extension: it is loaded (and needs everything), or a task was clicked. */
export type FromGraphPage = { readonly type: 'ready' } | { readonly type: 'reveal'; readonly taskId: string };

export interface GraphPageResources {
  /** The webview's `cspSource`: the only origin scripts and styles may come from. */
  readonly cspSource: string;
  /** Webview URIs of the bundled page script and its style sheet. */
  readonly scriptUri: string;
  readonly styleUri: string;
}

/** The run states a task is coloured by, in the order the legend shows them. */
const RUN_STATES: readonly TaskState[] = ['pending', 'running', 'completed', 'failed', 'cancelled'];

const escapeAttribute = (value: string): string =>
  value.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/**
 * The page: no inline script or style and nothing from the network (a strict Content-Security-Policy). It holds no
 * data of the DAG: the script draws what the extension posts, with DOM APIs only.
 */
export function graphHtml({ cspSource, scriptUri, styleUri }: GraphPageResources): string {
  const source = escapeAttribute(cspSource);
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src ${source}; style-src ${source}">
  <meta name="viewport" content="width=device-width, initial-scale=1.0">
  <link rel="stylesheet" href="${escapeAttribute(styleUri)}">
  <title>ACMP DAG graph</title>
</head>
<body>
  <p id="status" role="status"></p>
  <ul id="legend" aria-label="Legend">
${RUN_STATES.map((state) => `    <li><span class="swatch state-${state}"></span>${state}</li>`).join('\n')}
    <li><span class="line cycle"></span>edge on a cycle</li>
    <li><span class="line dangling"></span>edge to a missing task</li>
    <li><span class="line stream"></span>stream_eligible edge</li>
  </ul>
  <div id="graph"></div>
  <script src="${escapeAttribute(scriptUri)}"></script>
</body>
</html>
`;
}
