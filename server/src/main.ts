// `acmp-dag-language-server --stdio` (or --node-ipc, as the VS Code client starts it).
import { ProposedFeatures, createConnection } from 'vscode-languageserver/node';
import { onStopSignals, signalExitCode } from './cli/signals';
import { startServer } from './server';

const connection = createConnection(ProposedFeatures.all);
// Over --stdio, stray console output would corrupt the JSON-RPC stream: send it to the client's log instead.
/* eslint-disable no-console -- the one place that redirects console output away from stdout */
console.log = (...args: unknown[]) => connection.console.log(args.map(String).join(' '));
console.info = console.log;
console.warn = (...args: unknown[]) => connection.console.warn(args.map(String).join(' '));
console.error = (...args: unknown[]) => connection.console.error(args.map(String).join(' '));
/* eslint-enable no-console */
// A signal's default action would end the server without its 'exit' handlers: a run's outputs spilled to a temporary
// folder would stay behind.
onStopSignals((signal) => process.exit(signalExitCode(signal)));
startServer(connection);
