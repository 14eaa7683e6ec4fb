// The peak resident memory of a Node process the test starts (Linux /proc): the process itself writes its VmHWM as
// it exits, so the figure is the peak of the whole run, not of the moments a poll happened to look.
import { readFileSync } from 'node:fs';

/** Node flags that make the process write its peak resident memory, in kB, to `file` as it exits. */
export function peakMemoryFlags(file: string): string[] {
  const code = `import { readFileSync, writeFileSync } from 'node:fs';
process.on('exit', () => writeFileSync(${JSON.stringify(file)}, /^VmHWM:\\s+(\\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]));`;
  return ['--import', `data:text/javascript,${encodeURIComponent(code)}`];
}

/** The peak resident memory, in bytes, a process started with `peakMemoryFlags(file)` wrote as it exited. */
export const peakMemoryBytes = (file: string): number => Number(readFileSync(file, 'utf8')) * 1024;
