// A durable run as a DagRun (types.ts), the same handle the in-memory driver gives: submitted to the engine, its
// events followed from the run's event log, its cancels sent through the engine, its report the workflow's.
import { randomUUID } from 'node:crypto';
import type { DagAnalysis } from '../../dag/analyze';
import { DEFAULT_MAX_CONCURRENCY } from '../machine';
import { refuseDagWithErrors } from '../refused';
import type { DagRun, RunOptions } from '../types';
import type { RunRequest } from '../../protocol/engineMessages';
import { type EngineClient, followRun } from './engineClient';

/** How a durable run uses the worker's result store (RunRequest's cache fields); by default it does. */
export interface DurableCacheOptions {
  readonly noCache?: boolean;
  readonly refresh?: readonly string[];
  readonly cacheExclude?: readonly string[];
  readonly cachePerProvider?: boolean;
}

export type DurableRunOptions = Pick<
  RunOptions,
  'policy' | 'maxConcurrency' | 'reuse' | 'onEvent' | 'runId' | 'routing' | 'budget' | 'quoteTimeoutMs'
> &
  DurableCacheOptions;

/** What the engine is sent to run the DAG of `text` with `options`. */
export function runRequestOf(text: string, options: Omit<DurableRunOptions, 'onEvent' | 'runId'>): RunRequest {
  return {
    dag: text,
    policy: options.policy ?? 'fail-fast',
    maxConcurrency: options.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY,
    ...(options.reuse === undefined ? {} : { reuse: options.reuse }),
    // Always named: a request without it is one submitted before runs were priced, which the worker runs unpriced.
    routing: options.routing ?? 'cheapest',
    ...(options.budget === undefined ? {} : { budget: options.budget }),
    ...(options.quoteTimeoutMs === undefined ? {} : { quoteTimeoutMs: options.quoteTimeoutMs }),
    // Always named: a request without it is one submitted before runs reused results, which looks nothing up.
    noCache: options.noCache === true,
    ...(options.refresh === undefined || options.refresh.length === 0 ? {} : { refresh: options.refresh }),
    ...(options.cacheExclude === undefined || options.cacheExclude.length === 0
      ? {}
      : { cacheExclude: options.cacheExclude }),
    ...(options.cachePerProvider === true ? { cachePerProvider: true } : {}),
  };
}

/** Submits the run; rejects with RunRefused for a DAG with errors (nothing is submitted), or when the engine does. */
export async function startDurableRun(
  client: EngineClient,
  analysis: DagAnalysis,
  options: DurableRunOptions = {},
): Promise<DagRun> {
  refuseDagWithErrors(analysis);
  const runId = options.runId ?? `run-${randomUUID()}`;
  await client.submit(runId, analysis.model.dagId ?? '', runRequestOf(analysis.document.text, options));
  const onEvent = options.onEvent ?? (() => undefined);
  const done = followRun(client, runId, (event) => {
    try {
      onEvent(event);
    } catch {
      // A listener's failure must not stop the following.
    }
  }).then((report) => report!); // followed without a stop: it ends with the run's report
  const control = (task: string | undefined, reason: string): void =>
    void client
      .control(runId, { ...(task === undefined ? {} : { task }), reason, at: new Date().toISOString() })
      .catch(() => undefined);
  return {
    runId,
    done,
    cancel: (reason = 'the run was cancelled') => control(undefined, reason),
    cancelTask: (taskId, reason = 'cancelled by the user') => control(taskId, reason),
    // The outputs are the engine's and the output store's: nothing of them is kept here.
    releaseOutputs: () => undefined,
  };
}
