// `acmp-dag serve --stdio | --http PORT`: the built-in provider as an MCP server speaking ACMP, until stdin ends
// (--stdio) or the process is told to stop (either: SIGINT, SIGTERM or SIGHUP), its sessions closed on the way out.
import { parseArgs } from 'node:util';
import { serveHttp, serveStdio } from '../run/builtin/mcpServer';
import { UsageError } from './providersFile';
import { onStopSignals } from './signals';

export async function serveCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { stdio: { type: 'boolean' }, http: { type: 'string' } } });
  if (values.stdio === true && values.http === undefined) {
    const stop = new AbortController();
    const stopListening = onStopSignals(() => stop.abort());
    try {
      await serveStdio(stop.signal);
    } finally {
      stopListening();
    }
    return 0;
  }
  if (values.stdio === true || values.http === undefined || !/^\d{1,5}$/.test(values.http)) {
    throw new UsageError('serve needs either --stdio or --http PORT');
  }
  const server = await serveHttp(Number(values.http), '127.0.0.1', { token: process.env.ACMP_TOKEN || undefined });
  let stopListening = (): void => undefined;
  const stopped = new Promise((resolve) => (stopListening = onStopSignals(resolve)));
  // Announced once a signal stops it cleanly: whoever read the URL may send one at once.
  process.stderr.write(`acmp-dag: serving the built-in provider at ${server.url}\n`);
  await stopped;
  stopListening();
  await server.close();
  return 0;
}
