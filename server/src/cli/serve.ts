// `acmp-dag serve --stdio | --http PORT [--price-factor F] [--offer-valid-ms N] [--latency-ms N]`: the built-in
// provider as an MCP server speaking ACMP, quoting its prices (Layer 6), until stdin ends (--stdio) or the process is
// told to stop (either: SIGINT, SIGTERM or SIGHUP), its sessions closed on the way out.
import { parseArgs } from 'node:util';
import { serveHttp, serveStdio } from '../run/builtin/mcpServer';
import { BuiltinProvider, type BuiltinProviderOptions } from '../run/builtin/provider';
import { UsageError } from './providersFile';
import { onStopSignals } from './signals';

/** The value of a numeric option, or undefined when not given; `valid` says what it needs, in the usage error. */
function numberOption(
  name: string,
  value: string | undefined,
  valid: (number: number) => boolean,
  needs: string,
): number | undefined {
  if (value === undefined) return undefined;
  const number = value.trim() === '' ? NaN : Number(value);
  if (!Number.isFinite(number) || !valid(number)) throw new UsageError(`--${name} needs ${needs}, not "${value}"`);
  return number;
}

const positiveInteger = (number: number) => Number.isSafeInteger(number) && number > 0;

/** The provider's terms from the options: its price factor, offer window and advertised latency. */
function providerOptions(values: {
  'price-factor'?: string;
  'offer-valid-ms'?: string;
  'latency-ms'?: string;
}): BuiltinProviderOptions {
  return {
    priceFactor: numberOption('price-factor', values['price-factor'], (n) => n >= 0, 'a number of 0 or more'),
    offerValidMs: numberOption('offer-valid-ms', values['offer-valid-ms'], positiveInteger, 'a positive integer'),
    latencyMs: numberOption('latency-ms', values['latency-ms'], positiveInteger, 'a positive integer'),
  };
}

export async function serveCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      stdio: { type: 'boolean' },
      http: { type: 'string' },
      'price-factor': { type: 'string' },
      'offer-valid-ms': { type: 'string' },
      'latency-ms': { type: 'string' },
    },
  });
  const stdio = values.stdio === true && values.http === undefined;
  if (!stdio && (values.stdio === true || values.http === undefined || !/^\d{1,5}$/.test(values.http))) {
    throw new UsageError('serve needs either --stdio or --http PORT');
  }
  const provider = new BuiltinProvider(providerOptions(values));
  if (stdio) {
    const stop = new AbortController();
    const stopListening = onStopSignals(() => stop.abort());
    try {
      await serveStdio(stop.signal, provider);
    } finally {
      stopListening();
    }
    return 0;
  }
  const server = await serveHttp(Number(values.http), '127.0.0.1', {
    token: process.env.ACMP_TOKEN || undefined,
    provider,
  });
  let stopListening = (): void => undefined;
  const stopped = new Promise((resolve) => (stopListening = onStopSignals(resolve)));
  // Announced once a signal stops it cleanly: whoever read the URL may send one at once.
  process.stderr.write(`acmp-dag: serving the built-in provider at ${server.url}\n`);
  await stopped;
  stopListening();
  await server.close();
  return 0;
}
