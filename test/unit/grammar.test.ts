import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { INITIAL, Registry, parseRawGrammar, type IGrammar, type IRawTheme, type StateStack } from 'vscode-textmate';
import { parse as parseJsonc } from 'jsonc-parser';
import { OnigScanner, OnigString, loadWASM } from 'vscode-oniguruma';
import { e2eCache } from '../support/e2eCache';

// package.json has no "type", so this file is CommonJS (tsconfig module Node16): __filename and __dirname exist.
const requireFromHere = createRequire(__filename);
const GRAMMAR_PATH = path.resolve(__dirname, '../../syntaxes/acmp-dag.tmLanguage.json');
const SCOPE_NAME = 'source.acmp-dag';

const TASK_ID = 'entity.name.function.task-id.acmp-dag';
const DAG_ID = 'entity.name.type.dag-id.acmp-dag';
const CAPABILITY = 'entity.name.tag.capability.acmp-dag';
const FIELD_PATH = 'string.other.field-path.acmp-dag';
/** A field path's member: coloured like a JSON key, else (Kimbie Dark colours keys like strings) like a member. */
const MEMBER = 'support.type.property-name.json.field-path.acmp-dag';
const MEMBER_FALLBACK = 'variable.other.member.acmp-dag';
const ACCESSOR = 'punctuation.accessor.acmp-dag';
const INDEX_PUNCT = 'punctuation.definition.index.acmp-dag';
const INDEX_NUMBER = 'constant.numeric.index.acmp-dag';
const FORMAT_KEY = 'support.type.property-name.acmp-dag';
const JSON_KEY = 'support.type.property-name.json';
const STRING = 'string.quoted.double.json';

let grammarPromise: Promise<{ registry: Registry; grammar: IGrammar }> | undefined;

async function loadGrammar(): Promise<IGrammar> {
  return (await loadRegistry()).grammar;
}

function loadRegistry(): Promise<{ registry: Registry; grammar: IGrammar }> {
  grammarPromise ??= (async () => {
    const wasm = readFileSync(requireFromHere.resolve('vscode-oniguruma/release/onig.wasm'));
    await loadWASM(wasm);
    const registry = new Registry({
      onigLib: Promise.resolve({
        createOnigScanner: (sources: string[]) => new OnigScanner(sources),
        createOnigString: (str: string) => new OnigString(str),
      }),
      loadGrammar: (scopeName: string) =>
        Promise.resolve(
          scopeName === SCOPE_NAME ? parseRawGrammar(readFileSync(GRAMMAR_PATH, 'utf8'), GRAMMAR_PATH) : null,
        ),
    });
    const grammar = await registry.loadGrammar(SCOPE_NAME);
    if (!grammar) throw new Error(`grammar ${SCOPE_NAME} did not load`);
    return { registry, grammar };
  })();
  return grammarPromise;
}

interface Token {
  readonly start: number;
  readonly end: number;
  readonly scopes: readonly string[];
}

interface TokenizedDocument {
  readonly lines: readonly string[];
  readonly tokens: readonly (readonly Token[])[];
}

async function tokenize(text: string): Promise<TokenizedDocument> {
  const grammar = await loadGrammar();
  const lines = text.split('\n');
  const tokens: Token[][] = [];
  let state: StateStack = INITIAL;
  for (const line of lines) {
    const result = grammar.tokenizeLine(line, state);
    tokens.push(
      result.tokens.map((t) => ({ start: t.startIndex, end: Math.min(t.endIndex, line.length), scopes: t.scopes })),
    );
    state = result.ruleStack;
  }
  return { lines, tokens };
}

/**
 * Scopes of the token covering `part` inside the `occurrence`-th (0-based) occurrence of `context` in the
 * document. `context` must lie on one line; the single token found must cover all of `part`.
 */
function scopesAt(doc: TokenizedDocument, context: string, part: string = context, occurrence = 0): readonly string[] {
  const offset = context.indexOf(part);
  if (offset < 0) throw new Error(`"${part}" is not inside "${context}"`);
  let seen = 0;
  for (let lineNo = 0; lineNo < doc.lines.length; lineNo++) {
    const line = doc.lines[lineNo] ?? '';
    for (let col = line.indexOf(context); col >= 0; col = line.indexOf(context, col + 1)) {
      if (seen++ !== occurrence) continue;
      const start = col + offset;
      const end = start + part.length;
      const lineTokens = doc.tokens[lineNo] ?? [];
      const token = lineTokens.find((t) => t.start <= start && start < t.end);
      if (!token) throw new Error(`no token at ${lineNo + 1}:${start + 1}`);
      if (token.end < end) {
        const pieces = lineTokens
          .filter((t) => t.end > start && t.start < end)
          .map((t) => `"${line.slice(t.start, t.end)}"`)
          .join(' ');
        throw new Error(`"${part}" at ${lineNo + 1}:${start + 1} spans several tokens: ${pieces}`);
      }
      return token.scopes;
    }
  }
  throw new Error(`occurrence ${occurrence} of "${context}" not found (${seen} found)`);
}

function assertHas(scopes: readonly string[], scope: string, what: string): void {
  assert.ok(scopes.includes(scope), `${what}: expected ${scope} in [${scopes.join(', ')}]`);
}

function assertLacks(scopes: readonly string[], scope: string, what: string): void {
  assert.ok(!scopes.includes(scope), `${what}: did not expect ${scope} in [${scopes.join(', ')}]`);
}

function innermost(scopes: readonly string[]): string | undefined {
  return scopes[scopes.length - 1];
}

// Layer 2 §3 pipeline, with metadata added; valid JSON, formatted the usual human way.
const PIPELINE = `{
  "dag_id": "dag_f4e2a1",
  "tasks": [
    {
      "task_id": "task_split_01",
      "capability": "text-split",
      "input": {
        "type": "text",
        "data": "Long document text here..."
      },
      "output_type": "json",
      "metadata": {
        "requester": "agent:hermes-7b:eu-west",
        "dag_id": "dag_f4e2a1",
        "foo": "bar"
      }
    },
    {
      "task_id": "task_sent_02a",
      "capability": "sentiment-analysis",
      "input": {
        "source": {"from_task": "task_split_01", "field": "data.chunks[0]"}
      },
      "output_type": "json",
      "input_tokens_est": 200
    },
    {
      "task_id": "task_sent_02b",
      "capability": "sentiment-analysis",
      "input": {
        "source": {"from_task": "task_split_01", "field": "data.chunks[1]"}
      },
      "output_type": "json",
      "input_tokens_est": 200
    },
    {
      "task_id": "task_agg_03",
      "capability": "result-aggregation",
      "input": {
        "source": {"from_tasks": ["task_sent_02a", "task_sent_02b"]}
      },
      "output_type": "json"
    }
  ],
  "edges": [
    {"from": "task_split_01", "to": "task_sent_02a"},
    {"from": "task_split_01", "to": "task_sent_02b"},
    {"from": "task_sent_02a", "to": "task_agg_03"},
    {"from": "task_sent_02b", "to": "task_agg_03", "stream_eligible": true}
  ]
}`;

// Not valid for the format (comments, bad escape), written unusually: extra whitespace around ':', a key on one
// line and its value on the next, a JSON payload whose keys happen to be format key names.
const ODD = `{
  /* block comment */
  "tasks": [
    // line comment
    {
      "task_id"   :    "task_spaced_01",
      "capability":
        "text-split",
      "input": {
        "type": "json",
        "data": {"task_id": "not_a_ref", "from": "nowhere", "items": [1, 2.5e3, null]}
      },
      "max_price_cu": 0.005,
      "preferred_tier": "B"
    },
    {
      "task_id": "task_esc_02",
      "capability": "text-split",
      "input": {
        "source": {
          "from_tasks": [
            "task_spaced_01",
            "task_split_\\u0030"
          ],
          "field": "data.items[12].name"
        }
      },
      "output_type": "say \\"hi\\" \\q"
    }
  ],
  "edges": []
}`;

test('the realistic document is valid JSON and tokenizes back to the top level', async () => {
  assert.doesNotThrow(() => JSON.parse(PIPELINE));
  const doc = await tokenize(PIPELINE);
  const lastLine = doc.tokens[doc.tokens.length - 1] ?? [];
  assert.deepEqual(lastLine[lastLine.length - 1]?.scopes, [
    SCOPE_NAME,
    'meta.structure.dictionary.json',
    'punctuation.definition.dictionary.end.json',
  ]);
  const odd = await tokenize(ODD);
  const oddLast = odd.tokens[odd.tokens.length - 1] ?? [];
  assert.deepEqual(oddLast[oddLast.length - 1]?.scopes, [
    SCOPE_NAME,
    'meta.structure.dictionary.json',
    'punctuation.definition.dictionary.end.json',
  ]);
});

test('task_id values carry the task-id scope inside the string scope', async () => {
  const doc = await tokenize(PIPELINE);
  for (const id of ['task_split_01', 'task_sent_02a', 'task_sent_02b', 'task_agg_03']) {
    const scopes = scopesAt(doc, `"task_id": "${id}"`, id);
    assertHas(scopes, STRING, `task_id ${id}`);
    assert.equal(innermost(scopes), TASK_ID, `task_id ${id}`);
  }
  // The quotes are string punctuation, not part of the id.
  const quote = scopesAt(doc, '"task_split_01"', '"');
  assert.equal(innermost(quote), 'punctuation.definition.string.begin.json');
  assertHas(quote, STRING, 'opening quote of a task id');
  assertLacks(quote, TASK_ID, 'opening quote of a task id');
});

test('edge from/to values carry the task-id scope', async () => {
  const doc = await tokenize(PIPELINE);
  const edges: readonly (readonly [string, string])[] = [
    ['task_split_01', 'task_sent_02a'],
    ['task_split_01', 'task_sent_02b'],
    ['task_sent_02a', 'task_agg_03'],
    ['task_sent_02b', 'task_agg_03'],
  ];
  edges.forEach(([from, to], i) => {
    const context = `{"from": "${from}", "to": "${to}"`;
    const occurrence = edges.slice(0, i).filter(([f, t]) => f === from && t === to).length;
    assert.equal(innermost(scopesAt(doc, context, from, occurrence)), TASK_ID, `edge ${i} from`);
    assert.equal(innermost(scopesAt(doc, context, to, occurrence)), TASK_ID, `edge ${i} to`);
    assertHas(scopesAt(doc, context, 'from', occurrence), FORMAT_KEY, `edge ${i} from key`);
  });
  assert.equal(innermost(scopesAt(doc, '"stream_eligible": true', 'true')), 'constant.language.json');
});

test('from_task and every from_tasks element carry the task-id scope', async () => {
  const doc = await tokenize(PIPELINE);
  for (const occurrence of [0, 1]) {
    const scopes = scopesAt(doc, '{"from_task": "task_split_01"', 'task_split_01', occurrence);
    assertHas(scopes, STRING, 'from_task');
    assert.equal(innermost(scopes), TASK_ID, `from_task #${occurrence}`);
  }
  const list = '["task_sent_02a", "task_sent_02b"]';
  for (const id of ['task_sent_02a', 'task_sent_02b']) {
    const scopes = scopesAt(doc, list, id);
    assertHas(scopes, 'meta.structure.array.json', `from_tasks ${id}`);
    assert.equal(innermost(scopes), TASK_ID, `from_tasks ${id}`);
  }
  assert.equal(innermost(scopesAt(doc, list, ',')), 'punctuation.separator.array.json');

  const odd = await tokenize(ODD);
  // One element per line, and an id written with an escape.
  assert.equal(innermost(scopesAt(odd, '            "task_spaced_01"', 'task_spaced_01')), TASK_ID);
  assert.equal(innermost(scopesAt(odd, '"task_split_\\u0030"', 'task_split_')), TASK_ID);
  const escape = scopesAt(odd, '"task_split_\\u0030"', '\\u0030');
  assertHas(escape, TASK_ID, 'escape inside a task id');
  assert.equal(innermost(escape), 'constant.character.escape.json');
});

test('key-specific value scopes survive unusual whitespace and a value on the next line', async () => {
  const doc = await tokenize(ODD);
  assert.equal(innermost(scopesAt(doc, '"task_id"   :    "task_spaced_01"', 'task_spaced_01')), TASK_ID);
  assert.equal(innermost(scopesAt(doc, '        "text-split",', 'text-split')), CAPABILITY);
});

test('the field path is split into members, accessors and indexes', async () => {
  const doc = await tokenize(PIPELINE);
  const context = '"field": "data.chunks[0]"';
  const expected: readonly (readonly [string, string])[] = [
    ['data', MEMBER],
    ['.', ACCESSOR],
    ['chunks', MEMBER],
    ['[', INDEX_PUNCT],
    ['0', INDEX_NUMBER],
    [']', INDEX_PUNCT],
  ];
  for (const [part, scope] of expected) {
    // Every part first occurs inside the value: the key `"field": ` has no letters of the path, no '.', '[' or ']'.
    const scopes = scopesAt(doc, context, part);
    assert.equal(innermost(scopes), scope, `field part ${part}`);
    if (scope === MEMBER) assertHas(scopes, MEMBER_FALLBACK, `field part ${part}`);
    assertHas(scopes, FIELD_PATH, `field part ${part}`);
    assertHas(scopes, STRING, `field part ${part}`);
  }
  // The other sentiment task indexes chunk 1.
  assert.equal(innermost(scopesAt(doc, '"field": "data.chunks[1]"', '1')), INDEX_NUMBER);

  const odd = await tokenize(ODD);
  const path = '"field": "data.items[12].name"';
  assert.equal(innermost(scopesAt(odd, path, '12')), INDEX_NUMBER);
  assert.equal(innermost(scopesAt(odd, path, 'name')), MEMBER);
  assert.equal(innermost(scopesAt(odd, '].name', ']')), INDEX_PUNCT, 'the "]" before ".name"');
  assert.equal(innermost(scopesAt(odd, '].name', '.')), ACCESSOR, 'the "." before "name"');
});

test('dag_id and capability values carry their own scopes', async () => {
  const doc = await tokenize(PIPELINE);
  const dagId = scopesAt(doc, '"dag_id": "dag_f4e2a1"', 'dag_f4e2a1');
  assertHas(dagId, STRING, 'dag_id');
  assert.equal(innermost(dagId), DAG_ID);
  // dag_id is also a metadata key.
  assert.equal(innermost(scopesAt(doc, '"dag_id": "dag_f4e2a1"', 'dag_f4e2a1', 1)), DAG_ID);

  for (const capability of ['text-split', 'sentiment-analysis', 'result-aggregation']) {
    const scopes = scopesAt(doc, `"capability": "${capability}"`, capability);
    assertHas(scopes, STRING, capability);
    assert.equal(innermost(scopes), CAPABILITY, capability);
  }
});

test('format keys and other keys get different scopes', async () => {
  const doc = await tokenize(PIPELINE);
  for (const key of ['dag_id', 'tasks', 'task_id', 'capability', 'input', 'output_type', 'metadata', 'requester']) {
    const scopes = scopesAt(doc, `"${key}":`, key);
    assertHas(scopes, FORMAT_KEY, key);
    assertHas(scopes, JSON_KEY, key);
  }
  for (const key of ['input_tokens_est', 'field', 'from_task', 'from_tasks', 'source', 'edges', 'type', 'data']) {
    assertHas(scopesAt(doc, `"${key}":`, key), FORMAT_KEY, key);
  }
  const foo = scopesAt(doc, '"foo": "bar"', 'foo');
  assertHas(foo, JSON_KEY, 'metadata key foo');
  assertLacks(foo, FORMAT_KEY, 'metadata key foo');
  assertLacks(scopesAt(doc, '"foo": "bar"', 'bar'), TASK_ID, 'metadata value bar');
});

test('ordinary string values elsewhere are plain strings', async () => {
  const doc = await tokenize(PIPELINE);
  const data = scopesAt(doc, '"data": "Long document text here..."', 'Long document text here...');
  assert.equal(innermost(data), STRING);
  assertLacks(data, TASK_ID, 'input data');
  for (const [context, part] of [
    ['"type": "text"', 'text'],
    ['"output_type": "json"', 'json'],
    ['"requester": "agent:hermes-7b:eu-west"', 'agent:hermes-7b:eu-west'],
  ] as const) {
    assert.equal(innermost(scopesAt(doc, context, part)), STRING, context);
  }
  assert.equal(innermost(scopesAt(doc, '"input_tokens_est": 200', '200')), 'constant.numeric.json');

  // Inside a literal data payload, format key names are just JSON keys and their values plain strings.
  const odd = await tokenize(ODD);
  const payload = '"data": {"task_id": "not_a_ref", "from": "nowhere"';
  assertLacks(scopesAt(odd, payload, 'task_id'), FORMAT_KEY, 'payload key task_id');
  assertHas(scopesAt(odd, payload, 'task_id'), JSON_KEY, 'payload key task_id');
  assert.equal(innermost(scopesAt(odd, payload, 'not_a_ref')), STRING);
  assert.equal(innermost(scopesAt(odd, payload, 'nowhere')), STRING);
  assert.equal(innermost(scopesAt(odd, '[1, 2.5e3, null]', '2.5e3')), 'constant.numeric.json');
  assert.equal(innermost(scopesAt(odd, '[1, 2.5e3, null]', 'null')), 'constant.language.json');
});

test('comments are illegal, escapes are recognised and bad escapes flagged', async () => {
  const doc = await tokenize(ODD);
  const line = scopesAt(doc, '// line comment', ' line comment');
  assertHas(line, 'comment.line.double-slash.json', 'line comment');
  assertHas(line, 'invalid.illegal.comment.acmp-dag', 'line comment');
  const block = scopesAt(doc, '/* block comment */', ' block comment ');
  assertHas(block, 'comment.block.json', 'block comment');
  assertHas(block, 'invalid.illegal.comment.acmp-dag', 'block comment');
  assert.ok(
    scopesAt(doc, '/* block comment */', '/*').some((s) => s.startsWith('invalid.illegal')),
    'comment delimiter is illegal too',
  );

  const value = '"output_type": "say \\"hi\\" \\q"';
  assert.equal(innermost(scopesAt(doc, value, '\\"')), 'constant.character.escape.json');
  assert.equal(innermost(scopesAt(doc, value, '\\q')), 'invalid.illegal.unrecognized-string-escape.json');
});

type IRawThemeSetting = IRawTheme['settings'][number];

/** The built-in colour themes of the VS Code the e2e suite installs (npm run test:e2e); absent on a fresh machine. */
const BUILTIN_THEMES = path.join(e2eCache, 'node_modules/code-server/lib/vscode/extensions');

/**
 * A theme's token colour rules, its `include`s and `tokenColors` files followed, after a first rule giving plain text
 * the editor's foreground (as VS Code does).
 */
function themeRules(file: string): IRawThemeSetting[] {
  const theme = parseJsonc(readFileSync(file, 'utf8')) as {
    include?: string;
    colors?: Record<string, string>;
    tokenColors?: string | IRawThemeSetting[];
    settings?: IRawThemeSetting[];
  };
  const near = (relative: string): string => path.join(path.dirname(file), relative);
  const foreground = theme.colors?.['editor.foreground'];
  return [
    ...(theme.include === undefined ? [] : themeRules(near(theme.include))),
    ...(foreground === undefined ? [] : [{ settings: { foreground } }]),
    ...(typeof theme.tokenColors === 'string' ? themeRules(near(theme.tokenColors)) : (theme.tokenColors ?? [])),
    ...(theme.settings ?? []),
  ];
}

test(
  "field paths' members have a colour of their own in every built-in theme: neither a string's nor plain text's",
  { skip: !existsSync(BUILTIN_THEMES) && 'no built-in themes: run npm run test:e2e once to install them' },
  async () => {
    const { registry, grammar } = await loadRegistry();
    // The leading space has no scope but the grammar's: plain text.
    const line = ' { "field": "data.chunks[0]", "note": "plain" }';
    const themes = readdirSync(BUILTIN_THEMES)
      .filter((folder) => folder.startsWith('theme-'))
      .flatMap((folder) => {
        const manifest = JSON.parse(readFileSync(path.join(BUILTIN_THEMES, folder, 'package.json'), 'utf8')) as {
          contributes?: { themes?: { path: string }[] };
        };
        return (manifest.contributes?.themes ?? []).map((theme) => ({
          label: path.join(folder, theme.path),
          file: path.join(BUILTIN_THEMES, folder, theme.path),
        }));
      });
    assert.ok(themes.length >= 10, `built-in themes found: ${themes.length}`);
    const alike: string[] = [];
    for (const { label, file } of themes) {
      registry.setTheme({ name: label, settings: themeRules(file) });
      const colours = registry.getColorMap();
      const { tokens } = grammar.tokenizeLine2(line, INITIAL);
      const colourAt = (part: string): string => {
        const offset = line.indexOf(part);
        let metadata = 0;
        for (let index = 0; index < tokens.length && tokens[index]! <= offset; index += 2)
          metadata = tokens[index + 1]!;
        // The foreground's index in the colour map (vscode-textmate's EncodedTokenAttributes).
        return colours[(metadata >>> 15) & 0x1ff]!.toUpperCase();
      };
      const [member, string, plain] = [colourAt('chunks'), colourAt('plain'), colourAt(' {')];
      if (member === string || member === plain) alike.push(`${label}: ${member} (string ${string}, text ${plain})`);
    }
    assert.deepEqual(alike, []);
  },
);
