// The bearer tokens of a run blanked out of what it shows: a provider may echo its token inside an output, and that
// output is printed, logged and sent to the editor. Only what is shown is redacted: a downstream task still gets the
// output as the provider sent it. Errors quoting a provider's own token are redacted where they are made
// (mcpConnection.ts); this covers outputs, and any run token in any of them.
import type { ProviderConfig } from '../protocol/settings';
import { StoredOutput } from './spilledOutputs';
import type { TaskOutput, RunReport, TaskReport } from '../protocol/report';

/** What a token is replaced with, as in errors. */
export const REDACTED = '[token]';

/** The tokens a run sends: those handed over for it by provider id, and those of the variables `tokenEnv` names. */
export function runSecrets(
  providers: readonly ProviderConfig[],
  tokens: Readonly<Record<string, string>> = {},
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  const secrets = Object.values(tokens);
  for (const { tokenEnv } of providers) if (tokenEnv !== undefined) secrets.push(env[tokenEnv] ?? '');
  return secrets;
}

type Container = Record<string, unknown> | unknown[];

const isContainer = (value: unknown): value is Container => typeof value === 'object' && value !== null;

export class Redactor {
  /** Longest first, so that a token holding another is blanked out whole. */
  private readonly secrets: readonly string[];
  /** Each token as it stands inside a JSON string (quotes and backslashes escaped). */
  private readonly escaped: readonly string[];

  constructor(secrets: Iterable<string>) {
    this.secrets = [...new Set(secrets)].filter((secret) => secret !== '').sort((a, b) => b.length - a.length);
    this.escaped = this.secrets.map((secret) => JSON.stringify(secret).slice(1, -1));
  }

  get active(): boolean {
    return this.secrets.length > 0;
  }

  /** Whether a text holds a token, as it is or as JSON writes it. */
  private mentions(text: string): boolean {
    return this.secrets.some((secret, at) => text.includes(secret) || text.includes(this.escaped[at]!));
  }

  /** The text with every token blanked out, as it is and as JSON writes it. */
  text(text: string): string {
    if (!this.active || !this.mentions(text)) return text;
    let redacted = text;
    this.secrets.forEach((secret, at) => {
      redacted = redacted.replaceAll(secret, REDACTED).replaceAll(this.escaped[at]!, REDACTED);
    });
    return redacted;
  }

  /**
   * The value with every token blanked out of its strings and property names: the value itself when it holds none,
   * else a copy. Iterative, for outputs nested deeper than the call stack goes.
   */
  value<T>(value: T): T {
    if (!this.active || !this.holdsSecret(value)) return value;
    if (typeof value === 'string') return this.text(value) as T;
    const copy = (container: Container): Container => (Array.isArray(container) ? [] : {});
    const root = copy(value as Container);
    const pending: [Container, Container][] = [[value as Container, root]];
    while (pending.length > 0) {
      const [from, to] = pending.pop()!;
      for (const key of Object.keys(from)) {
        const member = (from as Record<string, unknown>)[key];
        let made: unknown = member;
        if (typeof member === 'string') made = this.text(member);
        else if (isContainer(member)) {
          made = copy(member);
          pending.push([member, made as Container]);
        }
        // Defined rather than assigned: a "__proto__" key stays data.
        Object.defineProperty(to, Array.isArray(to) ? key : this.text(key), {
          value: made,
          writable: true,
          enumerable: true,
          configurable: true,
        });
      }
    }
    return root as T;
  }

  /** Whether the value holds a token anywhere: what holds one is never written where it outlives the run. */
  reveals(value: unknown): boolean {
    return this.active && this.holdsSecret(value);
  }

  /** Whether a string or property name anywhere in the value holds a token. */
  private holdsSecret(value: unknown): boolean {
    const pending: unknown[] = [value];
    while (pending.length > 0) {
      const next = pending.pop();
      if (typeof next === 'string') {
        if (this.mentions(next)) return true;
      } else if (isContainer(next)) {
        const array = Array.isArray(next);
        for (const key of Object.keys(next)) {
          if (!array && this.mentions(key)) return true;
          pending.push((next as Record<string, unknown>)[key]);
        }
      }
    }
    return false;
  }

  /**
   * An output as a report shows it. One kept on disk is read only to look for a token in its text, and comes back as a
   * redacted value only when it holds one.
   */
  output(output: TaskOutput): TaskOutput {
    if (!(output instanceof StoredOutput)) return this.value(output);
    return this.mentions(output.text()) ? this.value(output.read()) : output;
  }

  /** The report with the tokens blanked out of its outputs and errors. */
  report(report: RunReport): RunReport {
    if (!this.active) return report;
    const shown = new Map<TaskOutput, TaskOutput>();
    const redacted = (output: TaskOutput): TaskOutput => {
      let made = shown.get(output);
      if (made === undefined) shown.set(output, (made = this.output(output)));
      return made;
    };
    const tasks = report.tasks.map((task): TaskReport => {
      const output = task.output === undefined ? undefined : redacted(task.output);
      return {
        ...task,
        ...(output === undefined ? {} : { output }),
        // A re-run must not take this output for the provider's: its downstream tasks would read `[token]`.
        ...(output !== task.output && { output_redacted: true }),
        ...(task.error === undefined ? {} : { error: this.value(task.error) }),
      };
    });
    const result = Object.fromEntries(Object.entries(report.result).map(([id, output]) => [id, redacted(output)]));
    return { ...report, tasks, result };
  }
}
