// `acmp-dag`: the analysis and the executor for terminals and CI. Each command lives in cli/; this file dispatches.
// A command's modules load when it runs (esbuild defers the body of a module imported with `import()`), so that
// `--version` or `serve` do not pay for the analysis, ajv and zod, nor `run` for the MCP server.
import { UsageError } from './cli/usage';
import { VERSION } from './cli/version';

const USAGE = `Usage: acmp-dag validate FILE... [--format text|json|sarif] [--providers FILE] [--catalog SOURCE]...
       acmp-dag run FILE [--providers FILE] [--catalog SOURCE]... [--policy fail-fast|best-effort]
                    [--max-concurrency N] [--routing cheapest|fastest|listed] [--max-cost CU]
                    [--max-task-cost CU] [--quote-timeout-ms N] [--json]
                    [--task ID]... [--from ID]... [--upstream] [--refresh ID]... [--no-cache]
                    [--cache-dir DIR] [--cache-max-mb N] [--cache-exclude CAP]... [--cache-per-provider]
       acmp-dag plan FILE [--providers FILE] [--catalog SOURCE]... [--quote] [--json] [--max-concurrency N]
                     [--routing cheapest|fastest|listed] [--max-cost CU] [--no-cache] [--cache-dir DIR]
       acmp-dag cache stats [--json] | clear [--capability CAP] | prune [--cache-max-mb N]   (each [--cache-dir DIR])
       acmp-dag serve --stdio | --http PORT [--price-factor F] [--offer-valid-ms N] [--latency-ms N]
       acmp-dag engine start [--dir DIR] | stop [--dir DIR] [--purge]
       acmp-dag worker --engine ADDRESS [--identity-key KEY] [--providers FILE] [--port N] [--store DIR]
                       [--admin ADDRESS] [--advertise URL] [--cache-dir DIR] [--cache-max-mb N] [--no-cache]
       acmp-dag run FILE --engine ADDRESS [--detach] [--policy ...] [--max-concurrency N] [--json]
       acmp-dag runs | attach RUN_ID | cancel RUN_ID [--task TASK_ID] | report RUN_ID [--json]   (each --engine ADDRESS)

validate  checks ACMP DAG files against every rule of the ACMP Layer 2 task format.
  --format      text (default: file:line:col severity code message), json, or sarif (SARIF 2.1.0)
  --providers   providers file (default ./acmp.providers.json when present); its capabilities and
                prices enable the no-provider and over-budget checks
  --catalog     an ARD catalog whose providers join the file's, as for run
  Exit codes: 0 no errors, 1 errors found, 2 usage, 3 a file was not checked (unreadable, or too large
  to analyse; the other files are checked, and 3 wins over 1).
run       executes a DAG: one acmp/invoke per task, on the providers of the providers file
          (the built-in provider when there is none), printing each task's state as it changes.
  --catalog          an ARD catalog to discover providers in (repeatable): its URL, a host (its
                     /.well-known/ai-catalog.json) or a local file; its MCP server cards join the providers
                     file's (a provider of the file wins by id). One out of reach: a warning, and its last
                     good copy is used
  --policy           fail-fast (default: the first failure cancels the DAG) or best-effort
  --max-concurrency  tasks in flight at most (default 8)
  --routing          cheapest (default: each task quoted by every provider that negotiates, the lowest
                     valid offer accepted; providers that do not negotiate compete at their advertised
                     price, those without one last), fastest, or listed (the first provider in the
                     providers file's order, no quotes)
  --max-cost         the run's budget in CU: a task it cannot cover (with what is in flight reserved)
                     does not start, and ends cancelled; 0: none
  --max-task-cost    the most one task may cost, in CU (sent as max_price_cu with quotes and invokes)
  --quote-timeout-ms how long a task waits for its quotes (default 2000)
  --json             print the run report (JSON) on stdout instead of the progress
  Results: a task whose result the result store holds (same capability, resolved input, output_type,
  preferred_tier and metadata) completes at once from it, at 0 CU, marked cached; new results are kept.
  --no-cache         neither take results from the store nor keep any
  --refresh ID       run this task again whatever the store holds (repeatable, or comma-separated)
  --task ID          run only this task (repeatable), its upstream outputs taken from the store
  --from ID          run this task and everything downstream of it (repeatable), likewise
  --upstream         with --task/--from: run the upstream tasks the store has no result for, too
  --cache-dir DIR    the store's folder (default: results in the user cache folder, or $ACMP_DAG_CACHE_DIR)
  --cache-max-mb N   the store's bound in MiB (default 512): past it, the results used least recently go
  --cache-exclude CAP  never store nor reuse results of this capability (repeatable)
  --cache-per-provider  a stored result serves only tasks routed to the provider that made it
  Exit codes: 0 completed, 1 failed or cancelled, 2 the DAG has errors, a task no provider offers (the
  run does not start), upstream outputs --task/--from need are not stored, a task id named by --task,
  --from or --refresh is not in the DAG, or usage.
  Ctrl-C, SIGTERM or SIGHUP cancels the run (exit 1); a second one quits at once (exit 128 + its number).
plan      what a run would cost and take, before it runs: each task's provider with its price and latency
          and where each comes from (offer, advertised, history of past runs on this machine, unknown),
          the total (unknown prices counted, never summed as 0), the critical path and the wall time.
  --providers, --catalog  as for run
  --quote            ask each provider that may take a task for an offer (acmp/offerRequest; none is accepted)
  --routing          cheapest (default), fastest, or listed (the providers file's order)
  --max-concurrency  tasks in flight for the wall time (default 8)
  --max-cost         a budget in CU: says whether the plan fits it
  --json             print the plan (JSON)
  --no-cache, --cache-dir, --cache-exclude, --cache-per-provider  as for run: tasks the result store
                     holds are planned as cached, at 0 CU
  Exit codes: 0 every task can run (within --max-cost), 1 some task cannot (no provider offers its
  capability, or every price is above its max_price_cu) or the known total is over --max-cost,
  2 the DAG has errors or usage.
cache     the result store: stats (folder, results, bytes, oldest and last use, top capabilities; --json),
          clear (every result, or --capability CAP's), prune (evicts the least recently used down to
          --cache-max-mb, default 512, and compacts). --cache-dir DIR as for run. Exit codes: 0 done, 1 the
          store could not be changed (another process compacting it), 2 usage.
serve     exposes the built-in provider as an MCP server speaking ACMP (Layer 1), for other buyers.
  --stdio   on stdin/stdout, until stdin ends (or SIGINT, SIGTERM or SIGHUP)
  --http    Streamable HTTP at http://127.0.0.1:PORT/mcp (0 picks a free port; the URL goes to stderr),
            until SIGINT, SIGTERM or SIGHUP; with ACMP_TOKEN set, requests need "Authorization: Bearer $ACMP_TOKEN"
            At most 100 sessions at once (a new one beyond gets 503); a session idle for 5 minutes ends.
  --price-factor    multiplies each capability's catalog price, in its quotes (acmp/offerRequest, Layer 6)
                    and its charges alike (default 1; 0: free)
  --offer-valid-ms  the longest an offer holds (default 5000; a buyer may ask for less)
  --latency-ms      the latency its offers commit to (latency_sla_ms; default none)
Durable runs (README "Durable runs"), on a Restate engine; --engine ADDRESS is its ingress (or ACMP_ENGINE_URL):
          a local engine's unix:/.../ingress.sock, or a remote engine's URL (bearer token from ACMP_ENGINE_TOKEN).
engine    start: a local single-node Restate server reachable only by your user (unix sockets in DIR, 0700;
          data, log, key and record in DIR, default ./.acmp-engine), printing its addresses and identity key;
          stop: ends it; stop --purge: also removes DIR, all of the engine's data.
worker    serves the runs' workflow on 127.0.0.1:PORT (default 9080) and registers it with the engine; takes only
          requests the engine signed (--identity-key, ACMP_ENGINE_IDENTITY_KEY, or a local engine's own key);
          outputs above 64 KiB go to the output store DIR (default ./.acmp-outputs). Its runs reuse and keep
          results in the result store --cache-dir (default the user's, as runs in memory; bounded by
          --cache-max-mb, default 512); --no-cache: none.
run --engine  submits a durable run, prints its id and follows it (Ctrl-C detaches; --detach: do not follow).
runs / attach / cancel / report: list the engine's runs, follow one, cancel it (or a task and what depends
          on it), print its report. Exit codes: 3 the engine does not answer or no worker is registered, 4 no run
          of that id.`;

type Command = (args: string[]) => Promise<number>;

/** Each command's function, loaded with its module when the command runs (one `import()` each: its own chunk). */
const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  validate: async () => (await import('./cli/validate.js')).validate,
  run: async () => (await import('./cli/runCommand.js')).runCommand,
  plan: async () => (await import('./cli/plan.js')).planCommand,
  cache: async () => (await import('./cli/cache.js')).cacheCommand,
  serve: async () => (await import('./cli/serve.js')).serveCommand,
  engine: async () => (await import('./cli/engine.js')).engineCommand,
  worker: async () => (await import('./cli/worker.js')).workerCommand,
  runs: async () => (await import('./cli/durable.js')).runsCommand,
  attach: async () => (await import('./cli/durable.js')).attachCommand,
  cancel: async () => (await import('./cli/durable.js')).cancelCommand,
  report: async () => (await import('./cli/durable.js')).reportCommand,
};

/** What the options that are not commands print. */
const ANSWERS: Readonly<Record<string, string>> = {
  '--version': VERSION,
  '--help': USAGE,
  '-h': USAGE,
  help: USAGE,
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command !== undefined && Object.hasOwn(ANSWERS, command)) {
      process.stdout.write(ANSWERS[command] + '\n');
      return 0;
    }
    if (command === undefined || !Object.hasOwn(COMMANDS, command)) {
      throw new UsageError(command === undefined ? 'missing command' : `unknown command "${command}"`);
    }
    return await (
      await COMMANDS[command]!()
    )(rest);
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`acmp-dag: ${(error as Error).message}\n\n${USAGE}\n`);
      return 2;
    }
    throw error;
  }
}

// A reader that stops early (`acmp-dag validate FILE | head`) closes the pipe: the output nobody reads is dropped
// and the command ends as it would have, with its own exit code, rather than with an unhandled EPIPE.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`acmp-dag: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 2;
  },
);
