// The floor of an LSP diagnostics round trip, for the bench: a server on the same libraries that keeps the documents
// and publishes no diagnostics, so its publish takes what any server pays before analysing (reading the message,
// making the document). Started with `node --import tsx test/bench/floorServer.ts --stdio`.
import { ProposedFeatures, TextDocumentSyncKind, TextDocuments, createConnection } from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';

const connection = createConnection(ProposedFeatures.all);
const documents = new TextDocuments(TextDocument);
connection.onInitialize(() => ({ capabilities: { textDocumentSync: TextDocumentSyncKind.Incremental } }));
documents.onDidChangeContent(({ document }) => {
  void connection.sendDiagnostics({ uri: document.uri, version: document.version, diagnostics: [] });
});
documents.listen(connection);
connection.listen();
