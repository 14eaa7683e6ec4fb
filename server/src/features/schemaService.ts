// vscode-json-languageservice with the JSON Schema generated from our zod schema: property names, enum values and
// examples, with the schema's documentation. It parses its own tree, which costs ten times our analysis on a large
// file, so it is shown only the task or edge around the cursor: the rest of the text is blanked (line breaks kept,
// so positions are the same in both documents and need no mapping).
import { type CompletionItem, getLanguageService } from 'vscode-json-languageservice';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { DagAnalysis } from '../dag/analyze';
import { dagJsonSchema } from '../dag/jsonSchema';

const SCHEMA_URI = 'acmp-dag:/acmp-dag.schema.json';

const service = getLanguageService({});
service.configure({ validate: false, schemas: [{ uri: SCHEMA_URI, fileMatch: ['*'], schema: dagJsonSchema() }] });

/** `text` with every character but line breaks turned into a space, `inject` written into the first columns. */
function blank(text: string, inject: string): string {
  const blanked = text.replace(/[^\r\n]/g, ' ');
  let result = '';
  let i = 0;
  for (const ch of inject) {
    while (i < blanked.length && (blanked[i] === '\n' || blanked[i] === '\r')) result += blanked[i++];
    result += ch;
    i++;
  }
  return result + blanked.slice(i);
}

/**
 * The text the service sees for a position: inside `tasks[i]` or `edges[i]`, that element wrapped as the only one of
 * its list (a list's prefix always has room for `{"tasks":[`); elsewhere the whole text.
 */
function focusedText(analysis: DagAnalysis, offset: number): string {
  const { path, entries } = analysis.document.pathAt(offset);
  const list = path[0];
  const entry = entries[2];
  const text = analysis.document.text;
  if ((list !== 'tasks' && list !== 'edges') || entry === undefined || entry === -1) return text;
  const element = analysis.document.node(entry);
  const end = element.offset + element.length;
  return (
    blank(text.slice(0, element.offset), `{"${list}":[`) +
    text.slice(element.offset, end) +
    blank(text.slice(end), ']}')
  );
}

/** The schema's completions at `offset`: property names, enum values, examples and defaults. */
export async function schemaCompletions(
  document: TextDocument,
  analysis: DagAnalysis,
  offset: number,
): Promise<CompletionItem[]> {
  const focused = TextDocument.create(document.uri, 'json', document.version, focusedText(analysis, offset));
  const list = await service.doComplete(focused, document.positionAt(offset), service.parseJSONDocument(focused));
  return list?.items ?? [];
}
