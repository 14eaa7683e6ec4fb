// Security guarantees that need no editor: field paths stay on own properties at run time, stdio providers start
// without a shell, the webview shows DAG text as text, and running is declared off in untrusted workspaces.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { analyzeDag } from '../../server/src/dag/analyze';
import { connectProvider } from '../../server/src/run/connect';
import { startRun } from '../../server/src/run/executor';
import { INPUT_UNRESOLVED } from '../../server/src/run/inputs';

const ROOT = resolve(__dirname, '../..');

const runOnBuiltin = (dag: object) =>
  startRun(analyzeDag(JSON.stringify(dag)), { providers: [], connect: connectProvider, policy: 'best-effort' }).done;

describe('field paths at run time', () => {
  const INHERITED = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'constructor.prototype'];

  test('never reach inherited properties: each such path fails its task, nothing is invoked with it', async () => {
    const readers = INHERITED.map((path, index) => ({
      task_id: `task_read_${index}`,
      capability: 'echo',
      input: { source: { from_task: 'task_source', field: `data.${path}` } },
    }));
    const report = await runOnBuiltin({
      dag_id: 'dag_inherited',
      tasks: [
        { task_id: 'task_source', capability: 'echo', input: { type: 'json', data: { name: 'x' } } },
        // An own property read the same way: the path form itself works.
        {
          task_id: 'task_own',
          capability: 'echo',
          input: { source: { from_task: 'task_source', field: 'data.name' } },
        },
        ...readers,
      ],
      edges: ['task_own', ...readers.map((reader) => reader.task_id)].map((to) => ({ from: 'task_source', to })),
    });
    const byId = new Map(report.tasks.map((task) => [task.task_id, task]));
    assert.equal(byId.get('task_own')?.state, 'completed');
    assert.deepEqual(byId.get('task_own')?.output, { type: 'text', data: 'x' });
    INHERITED.forEach((path, index) => {
      const reader = byId.get(`task_read_${index}`);
      assert.equal(reader?.state, 'failed', path);
      assert.equal(reader?.error?.code, INPUT_UNRESOLVED, path);
      assert.match(reader?.error?.message ?? '', /does not resolve in the output of task "task_source"/, path);
    });
  });
});

describe('stdio providers', () => {
  test('start without a shell: shell metacharacters in `command` run nothing and fail with a clear error', async () => {
    const marker = join(tmpdir(), `acmp-no-shell-${randomUUID()}`);
    const command = `echo hi; touch ${marker}`;
    const report = await startRun(
      analyzeDag(
        JSON.stringify({
          dag_id: 'dag_shell',
          tasks: [{ task_id: 'task_shell', capability: 'shelly', input: { type: 'text', data: 'x' } }],
          edges: [],
        }),
      ),
      {
        providers: [{ id: 'shelly', transport: 'stdio', command, capabilities: ['shelly'] }],
        connect: connectProvider,
        attempts: 1,
      },
    ).done;
    const [task] = report.tasks;
    assert.equal(task?.state, 'failed');
    // The whole line was taken as the name of one program, which does not exist.
    assert.match(task?.error?.message ?? '', /provider "shelly" \(stdio\): spawn echo hi; touch \S+ ENOENT/);
    assert.equal(existsSync(marker), false, 'no shell ran the command line');
  });
});

describe('the graph webview', () => {
  test('sets every text it shows as text: its script writes no HTML', () => {
    const script = readFileSync(join(ROOT, 'client/webview/graphPageScript.ts'), 'utf8');
    assert.match(script, /\.textContent = /);
    assert.doesNotMatch(
      script,
      /innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser|createContextualFragment/,
    );
  });
});

describe('untrusted workspaces', () => {
  interface MenuEntry {
    readonly command: string;
    readonly when?: string;
  }
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    capabilities: { untrustedWorkspaces: { supported: unknown } };
    contributes: { commands: { command: string; enablement?: string }[]; menus: Record<string, MenuEntry[]> };
  };
  /** The commands that start a run: a workspace's settings can name a stdio command for it to spawn. */
  const RUN_COMMANDS = ['acmp.runDag', 'acmp.rerunFailed'];

  test('the extension declares limited support: running is what it holds back', () => {
    assert.equal(manifest.capabilities.untrustedWorkspaces.supported, 'limited');
  });

  test('every run command is enabled, and shown in every menu and the palette, only in a trusted workspace', () => {
    for (const command of RUN_COMMANDS) {
      const declared = manifest.contributes.commands.find((entry) => entry.command === command);
      assert.match(declared?.enablement ?? '', /\bisWorkspaceTrusted\b/, `${command} enablement`);
    }
    const entries = Object.entries(manifest.contributes.menus).flatMap(([menu, items]) =>
      items.filter((item) => RUN_COMMANDS.includes(item.command)).map((item) => ({ menu, ...item })),
    );
    assert.ok(entries.some((entry) => entry.menu === 'commandPalette'));
    for (const { menu, command, when } of entries) {
      assert.match(when ?? '', /(^|&&)\s*isWorkspaceTrusted\s*($|&&)/, `${command} in ${menu}`);
    }
  });
});
