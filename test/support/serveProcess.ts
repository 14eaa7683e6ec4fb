// `acmp-dag serve --http 0` as its own process, for the tests of what it serves across a real process boundary.
import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';

/** The bundle `npm run build` makes; ACMP_CLI_BUNDLE points elsewhere (a separate build while developing). */
export const CLI_BUNDLE = process.env.ACMP_CLI_BUNDLE ?? resolve(__dirname, '../../dist/cli.js');

export interface ServeProcess {
  /** The MCP endpoint it printed. */
  readonly url: string;
  readonly child: ChildProcess;
  /** Sends SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** `acmp-dag serve --http 0 ...args` with `env` added; resolves once it printed its URL, rejects if it exits first. */
export async function startHttpServe(args: readonly string[] = [], env: NodeJS.ProcessEnv = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI_BUNDLE, 'serve', '--http', '0', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const match = /at (http:\/\/\S+)/.exec(stderr);
      if (match?.[1] !== undefined) resolve(match[1]);
    });
    void exited.then((code) => reject(new Error(`serve --http exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    child,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
