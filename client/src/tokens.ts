// Provider bearer tokens: kept in VS Code's SecretStorage (never in settings) under the provider's id and endpoint
// (tokenStore.ts), handed to the server for a run only, and masked in the language client's log, whose verbose trace
// would print a run's arguments.
import { type LogOutputChannel, type SecretStorage, type Uri, window, workspace } from 'vscode';
import { ProviderSchema } from '../../server/src/protocol/settings';
import { type TokenProvider, TokenStore, endpointOf } from './tokenStore';

const MASK = '***';
const SET_TOKEN = 'Set Provider Token';

/** The providers `acmp.providers` configures for a document (or the workspace); malformed entries left out. */
export function configuredProviders(scope?: Uri): TokenProvider[] {
  const providers = workspace.getConfiguration('acmp', scope).get<readonly unknown[]>('providers');
  return (Array.isArray(providers) ? providers : []).flatMap((provider) => {
    const parsed = ProviderSchema.safeParse(provider);
    return parsed.success ? [parsed.data] : [];
  });
}

export class ProviderTokens {
  /** Every token handed out in this session, to mask wherever it could be written. */
  private readonly handedOut = new Set<string>();
  private readonly store: TokenStore;

  constructor(secrets: SecretStorage) {
    this.store = new TokenStore(secrets);
  }

  /**
   * The stored tokens of the providers configured for `scope`, by provider id. A provider whose endpoint changed since
   * its token was stored gets none, and the user is asked to set it again for the endpoint configured now.
   */
  async forProviders(scope?: Uri): Promise<Record<string, string>> {
    const { tokens, notSent } = await this.store.tokensFor(configuredProviders(scope));
    for (const token of Object.values(tokens)) this.handedOut.add(token);
    const [first] = notSent;
    if (first !== undefined) {
      const named = [...new Set(notSent.map((provider) => `"${provider.id}" (now ${endpointOf(provider)})`))];
      void window
        .showWarningMessage(
          `Not sending the stored token of provider ${named.join(', ')}: it was stored for another endpoint, or before tokens were tied to one. Set the token again for the endpoint configured now if you trust it.`,
          SET_TOKEN,
        )
        .then((choice) => (choice === SET_TOKEN ? this.promptAndStore(first) : undefined));
    }
    return tokens;
  }

  /**
   * The command `acmp.setProviderToken`: asks for a configured provider (unless given) and its token, showing where it
   * will be sent; an empty token deletes it.
   */
  async promptAndStore(given?: TokenProvider): Promise<void> {
    let provider = given;
    if (provider === undefined) {
      const providers = configuredProviders(window.activeTextEditor?.document.uri);
      if (providers.length === 0) {
        void window.showInformationMessage('No provider is configured: add one to the `acmp.providers` setting first.');
        return;
      }
      const picked = await window.showQuickPick(
        providers.map((candidate) => ({
          label: candidate.id,
          description: endpointOf(candidate),
          provider: candidate,
        })),
        { title: 'ACMP: Set Provider Token', placeHolder: 'Provider' },
      );
      if (picked === undefined) return;
      provider = picked.provider;
    }
    const endpoint = endpointOf(provider);
    const token = await window.showInputBox({
      title: `Token for provider "${provider.id}" at ${endpoint}`,
      prompt: `Stored in VS Code’s secret storage and sent as a bearer token to ${endpoint} only. Empty: remove it.`,
      password: true,
      ignoreFocusOut: true,
    });
    if (token === undefined) return;
    if (token === '') {
      await this.store.remove(provider);
      void window.showInformationMessage(`The token of provider "${provider.id}" at ${endpoint} was removed.`);
    } else {
      await this.store.store(provider, token);
      void window.showInformationMessage(`The token of provider "${provider.id}" at ${endpoint} was stored.`);
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
