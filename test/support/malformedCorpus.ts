// Malformed JSON texts made from recipes: what a file mid-edit, a broken tool or a hostile repository holds.

export interface MalformedText {
  /** The recipe and its variant, to name a failing case. */
  readonly name: string;
  readonly text: string;
}

/** A small valid DAG the recipes break: every kind of value a DAG file has, pretty-printed. */
export const BASE_DAG = JSON.stringify(
  {
    dag_id: 'dag_corpus',
    tasks: [
      { task_id: 'task_split', capability: 'text-split', input: { type: 'text', data: 'One. Two.' }, timeout_ms: 500 },
      {
        task_id: 'task_count',
        capability: 'echo',
        input: { source: { from_task: 'task_split', field: 'data.chunks[0]' } },
        metadata: { dag_id: 'dag_corpus', priority: 'normal' },
      },
      { task_id: 'task_join', capability: 'echo', input: { source: { from_tasks: ['task_split', 'task_count'] } } },
    ],
    edges: [
      { from: 'task_split', to: 'task_count' },
      { from: 'task_split', to: 'task_join', stream_eligible: true },
      { from: 'task_count', to: 'task_join' },
    ],
  },
  null,
  2,
);

/** A seeded generator (mulberry32): the corpus is the same on every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DEEP = 100_000;

/** The offsets just after each opening quote of a string in the base (keys and values). */
function stringStarts(text: string): number[] {
  return [...text.matchAll(/"/g)].map((match) => match.index + 1).filter((_, i) => i % 2 === 0);
}

/** `replacement` in place of the first occurrence of `target` in the base. */
const replaced = (target: string, replacement: string): string => BASE_DAG.replace(target, () => replacement);

export function malformedCorpus(): MalformedText[] {
  const corpus = new Map<string, MalformedText>();
  // Keyed by text: two recipes may make the same text (a truncation where a string was cut), kept once.
  const add = (name: string, text: string): void => {
    if (!corpus.has(text)) corpus.set(text, { name, text });
  };
  const next = random(0x5eed);

  // Files cut off mid-edit: inside every string of the base (unterminated), and at evenly spread offsets.
  for (const start of stringStarts(BASE_DAG)) add(`unterminated string at ${start}`, BASE_DAG.slice(0, start + 2));
  for (let i = 1; i <= 20; i++) add(`truncated at ${i}/21`, BASE_DAG.slice(0, Math.floor((BASE_DAG.length * i) / 21)));
  add('string running to a newline', replaced('"One. Two."', '"One.\nTwo.'));
  add('string running to the end', replaced('"One. Two."', '"One. Two.'));
  add('unterminated key', '{"dag_id');
  add('lone quote', '"');

  // Escapes JSON does not have, in a value and in a key.
  for (const escape of ['\\x41', '\\u12', '\\u', '\\uZZZZ', '\\', "\\'", '\\a', '\\0', '\\U0001F600', '\\u{41}']) {
    add(`bad escape ${escape} in a value`, replaced('One. Two.', `One${escape}Two`));
    add(`bad escape ${escape} in a key`, replaced('"task_id"', `"task${escape}id"`));
  }

  // Lone and reversed surrogates: as stray characters, in unknown keys, in unterminated strings.
  for (const [label, surrogate] of [
    ['high', '\uD800'],
    ['low', '\uDC00'],
    ['reversed pair', '\uDC00\uD800'],
    ['escaped high', '\\uD800'],
    ['escaped low', '\\uDFFF'],
  ] as const) {
    add(`lone ${label} surrogate as a value`, replaced('"dag_corpus"', surrogate));
    add(
      `lone ${label} surrogate in an unknown key`,
      replaced('{\n  "dag_id"', `{\n  "${surrogate}": "${surrogate}",\n  "dag_id"`),
    );
    add(`lone ${label} surrogate in an unterminated string`, `{"dag_id": "dag_${surrogate}`);
    add(`lone ${label} surrogate at the top level`, surrogate);
  }

  // Byte order marks: twice, in the middle, alone (one before the DAG is accepted: test/unit/fileText.test.ts).
  add('two BOMs', `\uFEFF\uFEFF${BASE_DAG}`);
  add('BOM between tokens', replaced('"tasks":', '\uFEFF"tasks":'));
  add('BOM alone', '\uFEFF');
  add('BOM before truncated text', `\uFEFF${BASE_DAG.slice(0, 40)}`);

  // NUL and other control characters: in strings (not allowed raw), between tokens, everywhere.
  for (const [label, control] of [
    ['NUL', '\0'],
    ['BEL', '\u0007'],
    ['escape', '\u001b'],
    ['unit separator', '\u001f'],
  ] as const) {
    add(`${label} in a string`, replaced('One. Two.', `One.${control}Two.`));
    add(`${label} in a key`, replaced('"edges"', `"ed${control}ges"`));
    add(`${label} between tokens`, replaced('"edges":', `${control}"edges":`));
  }
  add('raw tab in a string', replaced('One. Two.', 'One.\tTwo.'));
  add('raw tab in a key', replaced('"edges"', '"ed\tges"'));
  add('DEL and C1 between tokens', replaced('"edges":', '\u007f\u0085"edges":'));
  add('NUL at the end', `${BASE_DAG}\0`);
  add('only NULs', '\0'.repeat(1000));
  add('NUL after every character', [...BASE_DAG.slice(0, 200)].join('\0'));

  // Numbers JSON does not have, or beyond a double's range, where the schema wants an integer and a string.
  for (const number of [
    '1e400',
    '-1e400',
    '1e-400',
    '123456789012345678901234567890',
    '0x10',
    '01',
    '1.',
    '.5',
    '-',
    '+1',
    'NaN',
    'Infinity',
    '-Infinity',
    '1e',
    '1e+',
    '--1',
    '1_000',
    '9'.repeat(400),
  ]) {
    add(`number ${number.slice(0, 20)} as timeout_ms`, replaced('500', number));
    add(`number ${number.slice(0, 20)} as dag_id`, replaced('"dag_corpus"', number));
  }

  // Deep nesting, 100,000 levels: balanced and not, at the top level and inside a task's data.
  add('100,000 open brackets', '['.repeat(DEEP));
  add('100,000 open braces with keys', '{"a":'.repeat(DEEP));
  add('100,000 balanced brackets', '['.repeat(DEEP) + ']'.repeat(DEEP));
  add('100,000 balanced objects', '{"a":'.repeat(DEEP) + '1' + '}'.repeat(DEEP));
  add('100,000 alternating', '[{"a":'.repeat(DEEP / 2) + '0' + '}]'.repeat(DEEP / 2));
  add('100,000 closing brackets', ']'.repeat(DEEP));
  add('100,000 deep unbalanced data', replaced('"One. Two."', '['.repeat(DEEP) + ']'.repeat(DEEP - 1)));
  add('100,000 deep data, one bracket too many', replaced('"One. Two."', '['.repeat(DEEP) + ']'.repeat(DEEP + 1)));
  add('100,000 deep tasks list', replaced('"tasks": [', `"tasks": ${'['.repeat(DEEP)}`));

  // What JSON with comments, JSON5 and hand-editing add.
  add('line comment at the start', `// a DAG\n${BASE_DAG}`);
  add('line comment inside', replaced('"edges":', '// the edges\n  "edges":'));
  add('block comment inside', replaced('"tasks":', '/* tasks */ "tasks":'));
  add('unterminated block comment', replaced('"tasks":', '/* tasks "tasks":'));
  add('hash comment', `# a DAG\n${BASE_DAG}`);
  add('comment only', '// nothing here');
  add('trailing comma in the tasks', replaced('\n  ],\n  "edges"', ',\n  ],\n  "edges"'));
  add('trailing comma in the edges', BASE_DAG.replace(/}\n {2}\]\n}$/, '},\n  ]\n}'));
  add('trailing comma in an object', replaced('"data": "One. Two."', '"data": "One. Two.",'));
  add('trailing comma at the top level', BASE_DAG.replace(/\n}$/, ',\n}'));
  add('double comma', replaced('"dag_id": "dag_corpus",', '"dag_id": "dag_corpus",,'));
  add('leading comma', replaced('"tasks": [', '"tasks": [,'));
  add('single-quoted strings', BASE_DAG.replaceAll('"', "'"));
  add('unquoted keys', BASE_DAG.replace(/"(\w+)":/g, '$1:'));
  add('missing colon', replaced('"dag_id":', '"dag_id"'));
  add('missing comma', replaced('"dag_corpus",', '"dag_corpus"'));
  add('two top-level values', `${BASE_DAG}\n${BASE_DAG}`);
  add('misspelt literals', replaced('true', 'ture'));
  add('undefined and None', replaced('true', 'undefined').replace('500', 'None'));

  // Texts that hold no DAG at all.
  for (const text of ['', ' ', '\n\n', '{', '}', '[', ']', ':', ',', 'null', 'true', '0', '""', '[]', '{}', '"dag"'])
    add(`bare ${JSON.stringify(text)}`, text);

  // Random bytes, as an editor decodes a binary file, and random UTF-16 code units.
  const decoder = new TextDecoder('utf-8');
  for (let i = 0; i < 30; i++) {
    const bytes = Uint8Array.from({ length: 1 + Math.floor(next() * 4000) }, () => Math.floor(next() * 256));
    add(`random bytes #${i}`, decoder.decode(bytes));
  }
  for (let i = 0; i < 20; i++) {
    const units = Array.from({ length: 1 + Math.floor(next() * 2000) }, () => Math.floor(next() * 0x10000));
    add(`random UTF-16 #${i}`, String.fromCharCode(...units));
  }
  // Random characters of JSON's own alphabet, which the recovering parser meets most.
  const alphabet = '{}[]:,"\\ \n0123456789-+.eEtrufalsn';
  for (let i = 0; i < 20; i++) {
    const length = 1 + Math.floor(next() * 3000);
    add(
      `random JSON punctuation #${i}`,
      Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''),
    );
  }

  // Several faults at once.
  const faults: ((text: string) => string)[] = [
    (text) => `\uFEFF${text}`,
    (text) => text.replace('"tasks":', '// tasks\n"tasks":'),
    (text) => text.replace(/\n {2}\]/, ',\n  ]'),
    (text) => text.replace('One. Two.', 'One\\q\0\uD800'),
    (text) => text.replace('500', '1e999'),
    (text) => text.slice(0, Math.floor(text.length * 0.8)),
    (text) => text.replace('"field"', "'field'"),
  ];
  for (let i = 0; i < faults.length; i++) {
    for (let j = i + 1; j < faults.length; j++) {
      add(`mixed faults ${i} and ${j}`, faults[j]!(faults[i]!(BASE_DAG)));
    }
  }
  return [...corpus.values()];
}
