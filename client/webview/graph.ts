// The graph view's page script: lays the DAG out with dagre and draws it as SVG through DOM APIs (the DAG's text only
// ever as text nodes), colours tasks by run state, marks the cursor's task, and asks the extension to reveal a task.
import dagre, { type EdgeLabel, Graph, type GraphLabel, type NodeLabel } from '@dagrejs/dagre';
import type { DagGraph } from '../../server/src/protocol/run';
import type { TaskState } from '../../server/src/run/types';
import type { FromGraphPage, ToGraphPage } from '../src/graphPage';
import './graph.css';

declare function acquireVsCodeApi(): { postMessage(message: FromGraphPage): void };

/** dagre's layout grows faster than the square of the tasks: about a second at 500, most of a minute at 2,000. */
const MAX_DRAWN_TASKS = 500;
const PADDING = 10;
const LINE_HEIGHT = 16;
const SVG_NAMESPACE = 'http://www.w3.org/2000/svg';
const EDGE_KINDS = ['plain', 'cycle', 'dangling'] as const;

const page = acquireVsCodeApi();
const status = document.getElementById('status')!;
const container = document.getElementById('graph')!;

const states = new Map<string, TaskState>();
let cursorTaskId: string | undefined;
/** The drawn tasks, by id. */
let taskBoxes = new Map<string, { readonly group: SVGGElement; readonly capability: string | undefined }>();

function svgElement<K extends keyof SVGElementTagNameMap>(
  parent: Element,
  name: K,
  attributes: Readonly<Record<string, string | number>> = {},
): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG_NAMESPACE, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  parent.appendChild(element);
  return element;
}

const heightOf = (lines: number): number => LINE_HEIGHT * lines + 2 * PADDING;

/** A box of text lines at the origin, sized to them; `textContent` keeps any markup in the DAG plain text. */
function box(parent: Element, className: string, lines: readonly string[]): { group: SVGGElement; width: number } {
  const group = svgElement(parent, 'g', { class: className });
  const rect = svgElement(group, 'rect', { rx: 4 });
  let textWidth = 0;
  lines.forEach((line, index) => {
    const text = svgElement(group, 'text', { x: PADDING, y: PADDING + LINE_HEIGHT * (index + 1) - 4 });
    if (index > 0) text.classList.add('detail');
    text.textContent = line;
    textWidth = Math.max(textWidth, text.getComputedTextLength());
  });
  const width = Math.ceil(textWidth) + 2 * PADDING;
  rect.setAttribute('width', String(width));
  rect.setAttribute('height', String(heightOf(lines.length)));
  return { group, width };
}

function describe(shown: DagGraph, stale: boolean): string {
  const cycles = shown.edges.filter((edge) => edge.cycle).length;
  const dangling = shown.edges.filter((edge) => edge.dangling).length;
  const parts = [`${shown.dagId ?? 'DAG without a dag_id'}: ${shown.nodes.length} tasks, ${shown.edges.length} edges`];
  if (cycles > 0) parts.push(`${cycles} on a cycle`);
  if (dangling > 0) parts.push(`${dangling} to a missing task`);
  if (stale) parts.push('the file is not valid JSON now: this is the last graph that parsed');
  if (shown.nodes.length > MAX_DRAWN_TASKS) parts.push(`too many tasks to lay out here (at most ${MAX_DRAWN_TASKS})`);
  return parts.join(' · ');
}

function addArrowMarkers(svg: SVGSVGElement): void {
  const defs = svgElement(svg, 'defs');
  for (const kind of EDGE_KINDS) {
    const marker = svgElement(defs, 'marker', {
      id: `arrow-${kind}`,
      class: `arrow ${kind}`,
      viewBox: '0 0 10 10',
      refX: 10,
      refY: 5,
      markerUnits: 'userSpaceOnUse',
      markerWidth: 9,
      markerHeight: 9,
      orient: 'auto-start-reverse',
    });
    svgElement(marker, 'path', { d: 'M 0 0 L 10 5 L 0 10 z' });
  }
}

function draw(shown: DagGraph, stale: boolean): void {
  status.textContent = describe(shown, stale);
  taskBoxes = new Map();
  if (shown.nodes.length > MAX_DRAWN_TASKS) {
    container.replaceChildren();
    return;
  }
  // The SVG is in the document from the start: text is measured as it is added.
  const svg = svgElement(container, 'svg', { class: 'dag' });
  container.replaceChildren(svg);
  addArrowMarkers(svg);
  const edgeLayer = svgElement(svg, 'g');
  const nodeLayer = svgElement(svg, 'g');

  // Keys by position: graphlib keeps nodes in plain objects, where a task id such as `__proto__` would misbehave.
  const layout = new Graph<GraphLabel, NodeLabel, EdgeLabel>({ multigraph: true });
  // The side margins leave room for a self-loop on the rightmost task.
  layout.setGraph({ rankdir: 'TB', nodesep: 28, ranksep: 40, marginx: 28, marginy: 12 });
  const keys = new Map<string, string>();
  const groups = new Map<string, SVGGElement>();
  const place = (id: string, className: string, lines: readonly string[]): SVGGElement => {
    const key = `n${keys.size}`;
    const { group, width } = box(nodeLayer, className, lines);
    keys.set(id, key);
    groups.set(key, group);
    layout.setNode(key, { width, height: heightOf(lines.length) });
    return group;
  };
  for (const { id, capability } of shown.nodes) {
    const group = place(id, 'task', capability === undefined ? [id] : [id, capability]);
    taskBoxes.set(id, { group, capability });
    group.setAttribute('tabindex', '0');
    group.setAttribute('role', 'button');
    svgElement(group, 'title');
    const reveal = (): void => page.postMessage({ type: 'reveal', taskId: id });
    group.addEventListener('click', reveal);
    group.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter' && event.key !== ' ') return;
      event.preventDefault();
      reveal();
    });
    showState(id);
  }
  // An end of a dangling edge that names no task gets a box of its own.
  for (const edge of shown.edges) {
    for (const end of [edge.from, edge.to]) if (!keys.has(end)) place(end, 'missing', [end, 'no such task']);
  }
  // dagre routes a self-loop off to the side of its task, so self-loops are drawn as a loop on the task's right.
  shown.edges.forEach((edge, e) => {
    if (edge.from !== edge.to) layout.setEdge(keys.get(edge.from)!, keys.get(edge.to)!, {}, String(e));
  });
  dagre.layout(layout);

  for (const [key, group] of groups) {
    const { x = 0, y = 0, width, height } = layout.node(key);
    group.setAttribute('transform', `translate(${x - width / 2}, ${y - height / 2})`);
  }
  shown.edges.forEach((edge, e) => {
    const kind = edge.cycle ? 'cycle' : edge.dangling ? 'dangling' : 'plain';
    svgElement(edgeLayer, 'path', {
      class: `edge ${kind}${edge.streamEligible ? ' stream' : ''}`,
      d: edge.from === edge.to ? selfLoop(layout.node(keys.get(edge.from)!)) : edgePath(layout, keys, edge, e),
      'marker-end': `url(#arrow-${kind})`,
    });
  });
  const { width = 0, height = 0 } = layout.graph();
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', String(height));
  showCursor();
}

function edgePath(
  layout: Graph<GraphLabel, NodeLabel, EdgeLabel>,
  keys: ReadonlyMap<string, string>,
  edge: DagGraph['edges'][number],
  position: number,
): string {
  const { points = [] } = layout.edge(keys.get(edge.from)!, keys.get(edge.to)!, String(position));
  return points.map((point, index) => `${index === 0 ? 'M' : 'L'} ${point.x} ${point.y}`).join(' ');
}

function selfLoop({ x = 0, y = 0, width }: NodeLabel): string {
  const right = x + width / 2;
  return `M ${right} ${y - 8} C ${right + 22} ${y - 20}, ${right + 22} ${y + 20}, ${right} ${y + 8}`;
}

function showState(taskId: string): void {
  const drawn = taskBoxes.get(taskId);
  if (drawn === undefined) return;
  const state = states.get(taskId);
  drawn.group.setAttribute('class', state === undefined ? 'task' : `task state-${state}`);
  drawn.group.classList.toggle('current', taskId === cursorTaskId);
  const tooltip = [taskId, drawn.capability, state].filter((line) => line !== undefined);
  drawn.group.querySelector('title')!.textContent = tooltip.join('\n');
  drawn.group.setAttribute('aria-label', tooltip.join(', '));
}

function showCursor(): void {
  for (const group of container.querySelectorAll('.current')) group.classList.remove('current');
  const group = cursorTaskId === undefined ? undefined : taskBoxes.get(cursorTaskId)?.group;
  group?.classList.add('current');
  group?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
}

window.addEventListener('message', (event: MessageEvent<ToGraphPage>) => {
  const message = event.data;
  switch (message.type) {
    case 'graph':
      draw(message.graph, message.stale);
      break;
    case 'states':
      states.clear();
      for (const [taskId, state] of Object.entries(message.states)) states.set(taskId, state);
      for (const taskId of taskBoxes.keys()) showState(taskId);
      break;
    case 'state':
      states.set(message.taskId, message.state);
      showState(message.taskId);
      break;
    case 'cursor':
      cursorTaskId = message.taskId;
      showCursor();
      break;
  }
});

page.postMessage({ type: 'ready' });
