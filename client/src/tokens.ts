// Provider bearer tokens: kept in VS Code's SecretStorage (never in settings), handed to the server for a run only,
// and masked in the language client's log, whose verbose trace would print a run's arguments.
import { type LogOutputChannel, type SecretStorage, type Uri, window, workspace } from 'vscode';
import type { ProviderConfig } from '../../server/src/protocol/settings';

const secretKey = (providerId: string): string => `acmp.providerToken.${providerId}`;
const MASK = '***';

/** The ids of the providers `acmp.providers` configures for a document (or the workspace). */
export function configuredProviderIds(scope?: Uri): string[] {
  const providers = workspace.getConfiguration('acmp', scope).get<readonly Partial<ProviderConfig>[]>('providers');
  return (providers ?? []).flatMap((provider) => (typeof provider.id === 'string' ? [provider.id] : []));
}

export class ProviderTokens {
  /** Every token handed out in this session, to mask wherever it could be written. */
  private readonly handedOut = new Set<string>();

  constructor(private readonly secrets: SecretStorage) {}

  /** The stored tokens of the configured providers, by provider id. */
  async forProviders(providerIds: readonly string[]): Promise<Record<string, string>> {
    const tokens: Record<string, string> = {};
    for (const id of providerIds) {
      const token = await this.secrets.get(secretKey(id));
      if (token === undefined) continue;
      tokens[id] = token;
      this.handedOut.add(token);
    }
    return tokens;
  }

  /** The command `acmp.setProviderToken`: asks for a configured provider and its token; an empty token deletes it. */
  async promptAndStore(): Promise<void> {
    const ids = configuredProviderIds(window.activeTextEditor?.document.uri);
    if (ids.length === 0) {
      void window.showInformationMessage('No provider is configured: add one to the `acmp.providers` setting first.');
      return;
    }
    const providerId = await window.showQuickPick(ids, { title: 'ACMP: Set Provider Token', placeHolder: 'Provider' });
    if (providerId === undefined) return;
    const token = await window.showInputBox({
      title: `Token for provider "${providerId}"`,
      prompt: 'Stored in VS Code’s secret storage and sent to this provider as a bearer token. Empty: remove it.',
      password: true,
      ignoreFocusOut: true,
    });
    if (token === undefined) return;
    if (token === '') {
      await this.secrets.delete(secretKey(providerId));
      void window.showInformationMessage(`The token of provider "${providerId}" was removed.`);
    } else {
      await this.secrets.store(secretKey(providerId), token);
      void window.showInformationMessage(`The token of provider "${providerId}" was stored.`);
    }
  }

  /** `text` with every token handed out masked, as it is and as JSON writes it. */
  redact(text: string): string {
    let redacted = text;
    for (const token of this.handedOut) {
      redacted = redacted.replaceAll(token, MASK).replaceAll(JSON.stringify(token).slice(1, -1), MASK);
    }
    return redacted;
  }

  /** A log channel that writes through `channel` with every token masked. */
  redacting(channel: LogOutputChannel): LogOutputChannel {
    const redact = (text: string): string => this.redact(text);
    return {
      get name() {
        return channel.name;
      },
      get logLevel() {
        return channel.logLevel;
      },
      onDidChangeLogLevel: channel.onDidChangeLogLevel,
      trace: (message, ...args: unknown[]) => channel.trace(redact(message), ...args),
      debug: (message, ...args: unknown[]) => channel.debug(redact(message), ...args),
      info: (message, ...args: unknown[]) => channel.info(redact(message), ...args),
      warn: (message, ...args: unknown[]) => channel.warn(redact(message), ...args),
      error: (error, ...args: unknown[]) => channel.error(typeof error === 'string' ? redact(error) : error, ...args),
      append: (value) => channel.append(redact(value)),
      appendLine: (value) => channel.appendLine(redact(value)),
      replace: (value) => channel.replace(redact(value)),
      clear: () => channel.clear(),
      // Either show(preserveFocus) or the deprecated show(column, preserveFocus).
      show: (first?: unknown, preserveFocus?: boolean) =>
        channel.show(typeof first === 'boolean' ? first : preserveFocus),
      hide: () => channel.hide(),
      dispose: () => channel.dispose(),
    };
  }
}
