// The signals that ask a command to stop: Ctrl-C (SIGINT), `kill` and service managers (SIGTERM), and the terminal
// going away (SIGHUP). Left to their default, each ends the process at once, without its 'exit' handlers: a run's
// outputs on disk would stay behind, a server's sessions would not be closed.
import { constants } from 'node:os';

export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** The exit code of a command a signal made quit at once: 128 + the signal's number, as shells give it (SIGINT 130). */
export const signalExitCode = (signal: StopSignal): number => 128 + constants.signals[signal];

/** Calls `stop` with each stop signal the process receives; the function returned stops listening. */
export function onStopSignals(stop: (signal: StopSignal) => void): () => void {
  for (const signal of STOP_SIGNALS) process.on(signal, stop);
  return () => {
    for (const signal of STOP_SIGNALS) process.off(signal, stop);
  };
}
