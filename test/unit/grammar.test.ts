// The TextMate grammar, tokenized as VS Code does (vscode-textmate + oniguruma): task ids and field paths get
// scopes of their own, so themes colour them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import * as oniguruma from 'vscode-oniguruma';
import { INITIAL, Registry, parseRawGrammar, type IGrammar } from 'vscode-textmate';

const ROOT = join(__dirname, '../..');

async function loadGrammar(): Promise<IGrammar> {
  const wasm = readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
      createOnigString: (text: string) => new oniguruma.OnigString(text),
    }),
    loadGrammar: (scopeName: string) =>
      Promise.resolve(
        scopeName === 'source.acmp-dag'
          ? parseRawGrammar(
              readFileSync(join(ROOT, 'syntaxes/acmp-dag.tmLanguage.json'), 'utf8'),
              'acmp-dag.tmLanguage.json',
            )
          : null,
      ),
  });
  const grammar = await registry.loadGrammar('source.acmp-dag');
  assert.ok(grammar);
  return grammar;
}

interface Token {
  readonly line: number;
  readonly text: string;
  readonly scopes: readonly string[];
}

function tokenize(grammar: IGrammar, text: string): Token[] {
  const tokens: Token[] = [];
  let state = INITIAL;
  text.split('\n').forEach((line, lineNumber) => {
    const result = grammar.tokenizeLine(line, state);
    for (const token of result.tokens) {
      tokens.push({ line: lineNumber, text: line.slice(token.startIndex, token.endIndex), scopes: token.scopes });
    }
    state = result.ruleStack;
  });
  return tokens;
}

const DAG = `{
  "dag_id": "dag_f4e2a1",
  "tasks": [
    {
      "task_id": "task_split_01",
      "capability": "text-split",
      "input": { "type": "text", "data": "task_not_an_id" },
      "metadata": { "foo": "bar" }
    },
    {
      "task_id": "task_agg_03",
      "capability": "result-aggregation",
      "input": { "source": { "from_tasks": ["task_sent_02a", "task_sent_02b"] } }
    },
    {
      "task_id": "task_sent_02a",
      "capability": "sentiment-analysis",
      "input": { "source": { "from_task": "task_split_01", "field": "data.chunks[0]" } }
    }
  ],
  "edges": [{ "from": "task_split_01", "to": "task_sent_02a" }]
  // not JSON
}`;

const TASK_ID = 'entity.name.function.task-id.acmp-dag';

test('the grammar scopes task ids, field paths, dag_id, capabilities, keys and comments', async () => {
  const tokens = tokenize(await loadGrammar(), DAG);
  const scopesOf = (text: string, occurrence = 0): readonly string[] => {
    const found = tokens.filter((token) => token.text === text)[occurrence];
    assert.ok(found, `no token ${text}`);
    return found.scopes;
  };
  const has = (text: string, scope: string, occurrence = 0) =>
    assert.ok(scopesOf(text, occurrence).includes(scope), `${text}: ${scopesOf(text, occurrence).join(' ')}`);

  has('task_split_01', TASK_ID, 0); // task_id
  has('task_sent_02a', TASK_ID, 0); // inside from_tasks
  has('task_sent_02b', TASK_ID, 0);
  has('task_split_01', TASK_ID, 1); // from_task
  has('task_split_01', TASK_ID, 2); // edge from
  has('task_sent_02a', TASK_ID, 2); // edge to
  has('dag_f4e2a1', 'entity.name.type.dag-id.acmp-dag');
  has('text-split', 'entity.name.tag.capability.acmp-dag');
  has('data', 'variable.other.member.acmp-dag');
  has('chunks', 'variable.other.member.acmp-dag');
  has('.', 'punctuation.accessor.acmp-dag');
  has('[', 'punctuation.definition.index.acmp-dag', 2);
  has('0', 'constant.numeric.index.acmp-dag');
  has(']', 'punctuation.definition.index.acmp-dag', 1);
  has('task_id', 'support.type.property-name.acmp-dag');
  has('"tasks"', 'support.type.property-name.acmp-dag');
  has('"foo"', 'support.type.property-name.json');
  has('// not JSON', 'invalid.illegal.comment.line.acmp-dag');
  assert.ok(!scopesOf('task_not_an_id').includes(TASK_ID), 'an input string is no task id');
  assert.ok(scopesOf('task_not_an_id').includes('string.quoted.double.json'));
  assert.ok(!scopesOf('bar').some((scope) => scope.startsWith('support.type.property-name')), 'a value is no key');
});
