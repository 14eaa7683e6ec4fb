// `acmp-dag serve --stdio | --http PORT`: the built-in provider as an MCP server speaking ACMP, until stdin ends
// (--stdio) or the process is told to stop (--http).
import { parseArgs } from 'node:util';
import { serveHttp, serveStdio } from '../run/builtin/serve';
import { UsageError } from './providersFile';

export async function serveCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { stdio: { type: 'boolean' }, http: { type: 'string' } } });
  if (values.stdio === true && values.http === undefined) {
    await serveStdio();
    return 0;
  }
  if (values.stdio === true || values.http === undefined || !/^\d{1,5}$/.test(values.http)) {
    throw new UsageError('serve needs either --stdio or --http PORT');
  }
  const server = await serveHttp(Number(values.http), '127.0.0.1', { token: process.env.ACMP_TOKEN || undefined });
  process.stderr.write(`acmp-dag: serving the built-in provider at ${server.url}\n`);
  await new Promise((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  return 0;
}
