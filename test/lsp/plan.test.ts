// The plan in the editor over stdio: no-provider and over-budget only where providers are configured, hover on
// `dag_id` and on a task, the CodeLens with the plan's summary, `acmp/plan` with advertised prices and with real
// quotes from a provider process on 127.0.0.1.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import type { CodeLens, Hover, MarkupContent } from 'vscode-languageserver-types';
import {
  CRITICAL_PATH_REQUEST,
  type CriticalPathResult,
  type DagGraph,
  GRAPH_REQUEST,
  PLAN_REQUEST,
  type PlanResult,
} from '../../server/src/protocol/runMessages';
import { type LspSession, startLspSession } from '../support/lspHarness';

const ENV = { ACMP_DAG_CACHE_DIR: mkdtempSync(join(tmpdir(), 'acmp-plan-cache-')) };

/** Two providers that are never reached unless quotes are asked for: their terms are all a plan reads. */
const PROVIDERS = [
  {
    id: 'fast',
    transport: 'http',
    url: 'http://127.0.0.1:9/acmp',
    capabilities: ['summarization'],
    'acmp:price_cu': 0.02,
    'acmp:latency_p99_ms': 200,
    'acmp:tier': 'S',
  },
  {
    id: 'cheap',
    transport: 'http',
    url: 'http://127.0.0.1:9/acmp',
    capabilities: ['summarization', 'translation'],
    'acmp:price_cu': 0.005,
    'acmp:latency_p99_ms': 1500,
    'acmp:tier': 'B',
  },
];

const TEXT = `{
  "dag_id": "dag_plan",
  "tasks": [
    { "task_id": "task_sum", "capability": "summarization", "input": { "type": "text", "data": "A. B." } },
    { "task_id": "task_fr", "capability": "translation", "input": { "source": { "from_task": "task_sum" } }, "max_price_cu": 0.001 },
    { "task_id": "task_ocr", "capability": "ocr", "input": { "type": "text", "data": "x" } }
  ],
  "edges": [{ "from": "task_sum", "to": "task_fr" }]
}
`;

let opened = 0;
async function openText(session: LspSession, text: string) {
  const uri = `file:///virtual/plan-${++opened}.acmp-dag.json`;
  const published = session.diagnostics(uri);
  await session.open(uri, text);
  return { uri, diagnostics: (await published).diagnostics };
}

/** TEXT's plan's critical path: task_sum 1.5 s on the cheapest provider, task_fr (no provider at its price) unknown. */
const PLANNED_PATH: NonNullable<DagGraph['criticalPath']> = {
  taskIds: ['task_sum', 'task_fr'],
  by: 'latency',
  latencyMs: 1500,
  unknownLatency: 1,
};

/** The position of the first character of `needle`'s first occurrence, plus one (inside it). */
function inside(text: string, needle: string) {
  const offset = text.indexOf(needle) + 1;
  const before = text.slice(0, offset).split('\n');
  return { line: before.length - 1, character: before.at(-1)!.length };
}

const hoverText = async (session: LspSession, uri: string, needle: string): Promise<string> => {
  const hover = await session.connection.sendRequest<Hover>('textDocument/hover', {
    textDocument: { uri },
    position: inside(TEXT, needle),
  });
  return (hover.contents as MarkupContent).value;
};

describe('plan diagnostics: only with providers configured', () => {
  test('without providers, a market file gets neither no-provider nor over-budget', async () => {
    const session = await startLspSession({}, { env: ENV });
    try {
      const { diagnostics } = await openText(session, TEXT);
      assert.deepEqual(diagnostics, []);
    } finally {
      await session.stop();
    }
  });

  test('with providers, over-budget on max_price_cu and no-provider on the capability', async () => {
    const session = await startLspSession({ providers: PROVIDERS }, { env: ENV });
    try {
      const { diagnostics } = await openText(session, TEXT);
      assert.deepEqual(
        diagnostics.map((d) => [d.code, d.severity, d.range.start.line]),
        [
          ['over-budget', 2, 4],
          ['no-provider', 2, 5],
        ],
      );
      assert.equal(
        diagnostics[0]!.message,
        'The max_price_cu 0.001 of task "task_fr" is below the price of every provider that offers "translation": the cheapest, "cheap", asks 0.005 CU, so none would take the task. Raise max_price_cu to 0.005.',
      );
      assert.equal(
        diagnostics[1]!.message,
        'No provider offers "ocr" (task "task_ocr"). Offered: summarization, translation. Use one of them, or add a provider that offers it (acmp.providers, acmp.catalogs).',
      );
    } finally {
      await session.stop();
    }
  });
});

describe('the plan in the editor', () => {
  let session: LspSession;
  let uri: string;
  before(async () => {
    session = await startLspSession({ providers: PROVIDERS }, { env: ENV });
    ({ uri } = await openText(session, TEXT));
  });
  after(async () => session.stop());

  test('acmp/plan: the plan, its summary and its Markdown, from advertised prices', async () => {
    const result = await session.connection.sendRequest<PlanResult>(PLAN_REQUEST, { uri });
    assert.equal(result.quoted, false);
    assert.equal(result.summary, '≈ 0.005 CU · ≥ 1.5 s critical path · 2 tasks cannot run');
    const sum = result.plan.tasks.find((task) => task.task_id === 'task_sum')!;
    assert.equal(sum.provider_id, 'cheap');
    assert.deepEqual(sum.price, { value: 0.005, basis: 'advertised' });
    assert.deepEqual(result.plan.over_budget, ['task_fr']);
    assert.match(result.markdown, /^## Plan for dag_plan: 3 tasks, routing cheapest/);
    assert.match(result.markdown, /\| task_sum \| summarization \| cheap \| 0\.005 CU \(advertised\) \|/);
  });

  test('hover on dag_id leads with the plan summary', async () => {
    const text = await hoverText(session, uri, '"dag_plan"');
    assert.match(
      text,
      /^\*\*Plan:\*\* ≈ 0\.005 CU · ≥ 1\.5 s critical path · 2 tasks cannot run · ACMP: Show Plan for the whole plan\n\n\*\*`dag_plan`\*\* · 3 tasks/,
    );
  });

  test('hover on a task: its candidates with their terms, the one chosen and why', async () => {
    const text = await hoverText(session, uri, '"task_sum"');
    assert.match(text, /\*\*Plan:\*\* `cheap` at 0\.005 CU \(advertised\), the lowest price \(routing cheapest\)/);
    assert.match(text, /\| `cheap` ✓ \| 0\.005 CU \(advertised\) \| 1\.5 s \(advertised\) \| B \| chosen \|/);
    assert.match(text, /\| `fast` \| 0\.02 CU \(advertised\) \| 200 ms \(advertised\) \| S \| {2}\|/);
    const over = await hoverText(session, uri, '"task_fr"');
    assert.match(over, /no provider would take it: every provider's price is above the task's max_price_cu/);
    assert.match(over, /\| `cheap` \| 0\.005 CU \(advertised\) .* not taken: its price 0\.005 CU is above/);
  });

  test('a CodeLens on dag_id shows the summary and runs acmp.showPlan', async () => {
    const lenses = await session.connection.sendRequest<CodeLens[]>('textDocument/codeLens', { textDocument: { uri } });
    assert.equal(lenses.length, 1);
    assert.deepEqual(lenses[0]!.range, { start: { line: 1, character: 12 }, end: { line: 1, character: 22 } });
    const resolved = await session.connection.sendRequest<CodeLens>('codeLens/resolve', lenses[0]);
    assert.deepEqual(resolved.command, {
      title: 'Plan: ≈ 0.005 CU · ≥ 1.5 s critical path · 2 tasks cannot run',
      command: 'acmp.showPlan',
    });
  });

  test('acmp/graph carries the critical path for the graph view to highlight', async () => {
    const graph = await session.connection.sendRequest<DagGraph>(GRAPH_REQUEST, { uri });
    assert.deepEqual(graph.criticalPath, PLANNED_PATH);
  });

  test("acmp/criticalPath answers the plan's critical path, of the document version acmp/graph answered", async () => {
    const graph = await session.connection.sendRequest<DagGraph>(GRAPH_REQUEST, { uri, waitForPlan: false });
    const answer = await session.connection.sendRequest<CriticalPathResult>(CRITICAL_PATH_REQUEST, { uri });
    assert.ok(Number.isInteger(graph.version), `a version: ${graph.version}`);
    assert.equal(answer.version, graph.version);
    assert.deepEqual(answer.criticalPath, PLANNED_PATH);
  });

  test('acmp/graph without waiting for the plan carries the critical path of a plan made already', async () => {
    await session.connection.sendRequest<PlanResult>(PLAN_REQUEST, { uri });
    const graph = await session.connection.sendRequest<DagGraph>(GRAPH_REQUEST, { uri, waitForPlan: false });
    assert.deepEqual(graph.criticalPath?.taskIds, PLANNED_PATH.taskIds);
  });

  test('the plan follows the providers: a changed configuration changes the summary', async () => {
    const dearer = PROVIDERS.map((provider) => ({ ...provider, 'acmp:price_cu': provider['acmp:price_cu'] * 2 }));
    const republished = session.diagnostics(uri, (p) =>
      p.diagnostics.some((d) => typeof d.message === 'string' && d.message.includes('asks 0.01 CU')),
    );
    await session.configure({ providers: dearer });
    await republished;
    const result = await session.connection.sendRequest<PlanResult>(PLAN_REQUEST, { uri });
    assert.equal(result.summary, '≈ 0.01 CU · ≥ 1.5 s critical path · 2 tasks cannot run');
    await session.configure({ providers: PROVIDERS });
  });
});

test('a client that can refresh CodeLenses is asked to after a change of the providers, and its lens shows the new plan', async () => {
  const session = await startLspSession(
    { providers: PROVIDERS },
    { env: ENV, workspaceCapabilities: { codeLens: { refreshSupport: true } } },
  );
  try {
    const { uri } = await openText(session, TEXT);
    const refreshed = new Promise<void>((resolve) =>
      session.connection.onRequest('workspace/codeLens/refresh', () => {
        resolve();
        return null;
      }),
    );
    await session.configure({ providers: PROVIDERS.filter((provider) => provider.id === 'fast') });
    await refreshed;
    const [lens] = await session.connection.sendRequest<CodeLens[]>('textDocument/codeLens', { textDocument: { uri } });
    const resolved = await session.connection.sendRequest<CodeLens>('codeLens/resolve', lens);
    assert.equal(resolved.command?.title, 'Plan: ≈ 0.02 CU · ≥ 200 ms critical path · 2 tasks cannot run');
  } finally {
    await session.stop();
  }
});

describe('acmp/plan with quotes', () => {
  let provider: ChildProcess;
  let url: string;
  before(async () => {
    provider = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '../support/countingProviderProcess.ts')], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = (await once(createInterface({ input: provider.stdout! }), 'line')) as [string];
    url = (JSON.parse(line) as { mcp: string }).mcp;
  });
  after(() => {
    provider.kill();
  });

  test('"Get quotes" asks the provider: its offer replaces the advertised price', async () => {
    const session = await startLspSession(
      { providers: [{ id: 'counting', transport: 'http', url, capabilities: ['echo'], 'acmp:price_cu': 0.01 }] },
      { env: ENV },
    );
    try {
      const { uri } = await openText(
        session,
        JSON.stringify({
          dag_id: 'dag_quote',
          tasks: [{ task_id: 'task_echo', capability: 'echo', input: { type: 'text', data: 'x' } }],
          edges: [],
        }),
      );
      const advertised = await session.connection.sendRequest<PlanResult>(PLAN_REQUEST, { uri });
      assert.deepEqual(advertised.plan.tasks[0]!.price, { value: 0.01, basis: 'advertised' });
      const quoted = await session.connection.sendRequest<PlanResult>(PLAN_REQUEST, { uri, quote: true });
      assert.equal(quoted.quoted, true);
      assert.deepEqual(quoted.plan.tasks[0]!.price, { value: 0.001, basis: 'offer' });
      assert.match(quoted.summary, /^≈ 0\.001 CU/);
    } finally {
      await session.stop();
    }
  });
});
