// The built language server, over a real stdio connection: publishDiagnostics for fixtures and after edits.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Diagnostic } from 'vscode-languageserver-types';
import { analyzeDag } from '../../server/src/dag/analyze';
import { toLspDiagnostic } from '../../server/src/lspDiagnostics';
import { DIAGNOSTIC_CODES } from '../../server/src/dag/diagnostic';
import type { DagFile } from '../../server/src/dag/schema';
import { normalizeSettings } from '../../server/src/protocol/settings';
import { providerOffers } from '../../server/src/providerOffers';
import { fixtureProviders, readFixtureOptions } from '../support/fixtureOptions';
import { type LspSession, startLspSession } from '../support/lspHarness';
import { marketDag, seededRandom } from '../support/marketDag';

const FIXTURES = join(__dirname, '../fixtures/diagnostics');

interface Expected {
  code: string;
  severity: string;
  line: number;
  text: string;
}
const severityName = ['', 'error', 'warning', 'information'];

/** A fixture's analysis options become the settings a client would send for them. */
function settingsFor(name: string): unknown {
  const file = join(FIXTURES, `${name}.options.json`);
  if (!existsSync(file)) return {};
  const options = readFixtureOptions(file);
  return { limits: options.limits ?? {}, providers: fixtureProviders(options) };
}

function observed(text: string, uri: string, diagnostics: readonly Diagnostic[]): Expected[] {
  const document = TextDocument.create(uri, 'acmp-dag', 1, text);
  return diagnostics
    .map((d) => ({
      offset: document.offsetAt(d.range.start),
      code: String(d.code),
      severity: severityName[d.severity!]!,
      line: d.range.start.line + 1,
      text: text.slice(document.offsetAt(d.range.start), document.offsetAt(d.range.end)),
    }))
    .sort((a, b) => a.offset - b.offset)
    .map(({ code, severity, line, text }) => ({ code, severity, line, text }));
}

const fixtureNames = existsSync(FIXTURES)
  ? readdirSync(FIXTURES)
      .filter((file) => file.endsWith('.acmp-dag.json'))
      .map((file) => file.slice(0, -'.acmp-dag.json'.length))
  : [];

describe('language server over stdio: fixtures', () => {
  const sessions = new Map<string, LspSession>();
  const sessionFor = async (settings: unknown): Promise<LspSession> => {
    const key = JSON.stringify(settings);
    let session = sessions.get(key);
    if (session === undefined) {
      session = await startLspSession(settings);
      sessions.set(key, session);
    }
    return session;
  };
  after(async () => {
    for (const session of sessions.values()) await session.stop();
  });

  const codesPublished = new Set<string>();

  for (const name of fixtureNames) {
    test(`publishes the expected diagnostics for ${name}`, async () => {
      const file = join(FIXTURES, `${name}.acmp-dag.json`);
      const text = readFileSync(file, 'utf8');
      const expected = JSON.parse(readFileSync(join(FIXTURES, `${name}.expected.json`), 'utf8')) as Expected[];
      const session = await sessionFor(settingsFor(name));
      const uri = pathToFileURL(file).href;
      const published = session.diagnostics(uri);
      await session.open(uri, text);
      const params = await published;
      assert.deepEqual(observed(text, uri, params.diagnostics), expected);
      for (const d of params.diagnostics) {
        assert.equal(d.source, 'acmp-dag');
        codesPublished.add(String(d.code));
      }
      const closed = session.diagnostics(uri);
      await session.close(uri);
      assert.deepEqual((await closed).diagnostics, []);
    });
  }

  test('the server published every diagnostic code on the fixtures', () => {
    assert.deepEqual(
      DIAGNOSTIC_CODES.filter((code) => !codesPublished.has(code)),
      [],
    );
  });
});

describe('language server over stdio: editing', () => {
  let session: LspSession;
  before(async () => {
    session = await startLspSession();
  });
  after(async () => session.stop());

  const uri = 'file:///virtual/edit.acmp-dag.json';
  const clean = JSON.stringify(
    {
      dag_id: 'dag_edit',
      tasks: [
        { task_id: 'task_a', capability: 'echo', input: { type: 'text', data: 'hi' } },
        { task_id: 'task_b', capability: 'echo', input: { source: { from_task: 'task_a' } } },
      ],
      edges: [{ from: 'task_a', to: 'task_b' }],
    },
    null,
    2,
  );

  test('diagnostics follow edits: a cycle appears, then goes away; the newest version wins', async () => {
    const first = session.diagnostics(uri);
    await session.open(uri, clean);
    assert.deepEqual((await first).diagnostics, []);

    const cyclic = clean.replace('"edges": [', '"edges": [\n    { "from": "task_b", "to": "task_a" },');
    const withCycle = session.diagnostics(uri, (p) => p.version === 3);
    // Two quick edits: only the last one's diagnostics may arrive, stamped with its version.
    await session.change(uri, 2, cyclic.replace('task_b", "to"', 'task_q", "to"'));
    await session.change(uri, 3, cyclic);
    const params = await withCycle;
    // One wrong edge, one error: on the edge that closes the cycle, with the cycle's other edge related.
    assert.deepEqual(
      params.diagnostics.map((d) => [d.code, d.range.start.line]),
      [['cycle', cyclic.split('\n').findIndex((line) => line.includes('"from": "task_b"'))]],
    );
    assert.match(params.diagnostics[0]!.message as string, /the cycle task_a → task_b → task_a: .*remove this edge/);
    assert.equal(params.diagnostics[0]!.relatedInformation?.length, 1);

    const fixed = session.diagnostics(uri, (p) => p.version === 4);
    await session.change(uri, 4, clean);
    assert.deepEqual((await fixed).diagnostics, []);
    await session.close(uri);
  });

  test('broken JSON still gets one syntax diagnostic and the graph checks on what parsed', async () => {
    const broken = clean.replace('"to": "task_b"', '"to": "task_zz"').replace(/}\s*$/, '');
    const published = session.diagnostics('file:///virtual/broken.acmp-dag.json');
    await session.open('file:///virtual/broken.acmp-dag.json', broken);
    const codes = (await published).diagnostics.map((d) => d.code);
    assert.ok(codes.includes('json-syntax'), codes.join());
    assert.ok(codes.includes('dangling-edge'), codes.join());
    assert.equal(codes.filter((c) => c === 'json-syntax').length, 1);
  });
});

describe('language server over stdio: 1,000 market tasks without settings', () => {
  let session: LspSession;
  before(async () => {
    session = await startLspSession();
  });
  after(async () => session.stop());

  const publish = async (name: string, backEdges: number): Promise<{ text: string; diagnostics: Diagnostic[] }> => {
    const uri = `file:///virtual/${name}.acmp-dag.json`;
    const text = JSON.stringify(marketDag(1_000, { backEdges }), null, 2);
    const published = session.diagnostics(uri);
    await session.open(uri, text);
    const { diagnostics } = await published;
    await session.close(uri);
    return { text, diagnostics };
  };

  test('the clean file gets no diagnostic at all', async () => {
    assert.deepEqual((await publish('market', 0)).diagnostics, []);
  });

  test('one back edge is one cycle error on it, naming the path; two independent ones are two', async () => {
    const one = await publish('market-cycle', 1);
    assert.deepEqual(
      one.diagnostics.map((d) => d.code),
      ['cycle'],
    );
    const backEdge = (JSON.parse(one.text) as DagFile).edges.at(-1)!;
    const cycle = one.diagnostics[0]!;
    assert.equal(cycle.severity, 1);
    assert.match(
      cycle.message as string,
      new RegExp(`the cycle ${backEdge.to} → (task_\\d+ → )+${backEdge.from} → ${backEdge.to}: .*remove this edge`),
    );
    assert.ok((cycle.relatedInformation?.length ?? 0) >= 1);
    const two = await publish('market-cycles', 2);
    assert.deepEqual(
      two.diagnostics.map((d) => d.code),
      ['cycle', 'cycle'],
    );
    assert.notEqual(two.diagnostics[0]!.message, two.diagnostics[1]!.message);
  });
});

describe('language server over stdio: random edits', () => {
  const settings = { providers: [{ id: 'p', transport: 'stdio', command: 'x', capabilities: ['text-split', 'echo'] }] };
  let session: LspSession;
  before(async () => {
    session = await startLspSession(settings);
  });
  after(async () => session.stop());

  test('after bursts of random incremental edits, the published diagnostics equal a fresh analysis of the text', async () => {
    const { limits, providers } = normalizeSettings(settings);
    const options = { limits, offers: providerOffers(providers) };
    const random = seededRandom(16);
    const below = (n: number) => Math.floor(random() * n);
    const pieces = ['x', '"', ',', '{', '}', '[', ']', ':', ' ', '\n', 'task_a', '"echo"', '"from_task": "task_b"'];
    const uri = 'file:///virtual/random-edits.acmp-dag.json';
    const document = TextDocument.create(uri, 'acmp-dag', 1, JSON.stringify(marketDag(200, { backEdges: 1 }), null, 2));
    const opened = session.diagnostics(uri);
    await session.open(uri, document.getText());
    await opened;
    let withDiagnostics = 0;
    for (let burst = 0; burst < 12; burst++) {
      // Several edits without waiting, as typing sends them: only the last version's diagnostics count.
      for (let edit = 0, edits = 1 + below(5); edit < edits; edit++) {
        const text = document.getText();
        const start = below(text.length + 1);
        const end = Math.min(text.length, start + (random() < 0.5 ? 0 : below(40)));
        const change = {
          range: { start: document.positionAt(start), end: document.positionAt(end) },
          text: random() < 0.3 ? '' : pieces[below(pieces.length)]!,
        };
        TextDocument.update(document, [change], document.version + 1);
        await session.connection.sendNotification('textDocument/didChange', {
          textDocument: { uri, version: document.version },
          contentChanges: [change],
        });
      }
      const version = document.version;
      const { diagnostics } = await session.diagnostics(uri, (params) => params.version === version);
      const fresh = analyzeDag(document.getText(), options).diagnostics.map((d) => toLspDiagnostic(document, d));
      assert.deepEqual(diagnostics, fresh, `burst ${burst}`);
      if (diagnostics.length > 0) withDiagnostics++;
    }
    assert.ok(withDiagnostics >= 6, `only ${withDiagnostics} bursts left diagnostics to compare`);
    await session.close(uri);
  });
});

describe('language server over stdio: settings', () => {
  test('limits and provider capabilities come from workspace/configuration', async () => {
    const session = await startLspSession({
      limits: { maxTasks: 1 },
      providers: [{ id: 'p', transport: 'stdio', command: 'x', capabilities: ['text-split'] }],
    });
    const uri = 'file:///virtual/settings.acmp-dag.json';
    const text = JSON.stringify({
      dag_id: 'dag_s',
      tasks: [
        { task_id: 'task_a', capability: 'text-split', input: { type: 'text', data: 'x' } },
        { task_id: 'task_b', capability: 'translate', input: { type: 'text', data: 'x' } },
      ],
      edges: [],
    });
    const published = session.diagnostics(uri);
    await session.open(uri, text);
    const diagnostics = (await published).diagnostics;
    assert.deepEqual(
      diagnostics.map((d) => d.code),
      ['limit', 'no-provider'],
    );
    assert.match(diagnostics[1]!.message as string, /"translate"/);
    await session.stop();
  });

  test('a changed configuration publishes again with the new settings, which documents opened later use', async () => {
    const providerOf = (capabilities: string[]) => ({
      providers: [{ id: 'p', transport: 'stdio', command: 'x', capabilities }],
    });
    const session = await startLspSession(providerOf(['text-split']));
    const text = JSON.stringify({
      dag_id: 'dag_s',
      tasks: [{ task_id: 'task_a', capability: 'translate', input: { type: 'text', data: 'x' } }],
      edges: [],
    });
    const codesOnOpen = async (uri: string): Promise<string[]> => {
      const published = session.diagnostics(uri);
      await session.open(uri, text);
      return (await published).diagnostics.map((d) => String(d.code));
    };
    assert.deepEqual(await codesOnOpen('file:///virtual/first.acmp-dag.json'), ['no-provider']);
    const republished = session.diagnostics('file:///virtual/first.acmp-dag.json', (p) => p.diagnostics.length === 0);
    await session.configure(providerOf(['text-split', 'translate']));
    await republished;
    assert.deepEqual(await codesOnOpen('file:///virtual/second.acmp-dag.json'), []);
    await session.stop();
  });
});
