// Provider choice and connections for one run (design.md §6): which providers may take a capability, one lazily
// opened connection per provider, a fresh one after a transport failure, all closed when the run ends; and what a
// provider's advertised `acmp` capability lets the buyer send (Layer 1 §1).
import type { ProviderConfig } from '../protocol/settings';
import { type AcmpCapability, METHODS, TransportError } from '../protocol/acmpMessages';
import { mayOffer, servingProviders } from './pricing';
import type { Connector, ProviderConnection } from './types';

/** The provider streams its output (`stream: true` may be sent). */
export const streamsOutput = (acmp: AcmpCapability | undefined): boolean =>
  acmp?.features.output_streaming === true && acmp.emits.includes(METHODS.streamChunk);

/** The provider takes its input in chunks (`input_stream: true` and `acmp/inputChunk` may be sent). */
export const streamsInput = (acmp: AcmpCapability | undefined): boolean =>
  acmp?.features.input_streaming === true && acmp.accepts.includes(METHODS.inputChunk);

export const acceptsCancel = (acmp: AcmpCapability | undefined): boolean =>
  acmp?.accepts.includes(METHODS.cancel) === true;

/** The provider takes quotes (Layer 6): it advertises both `acmp/offerRequest` and `acmp/accept`. */
export const negotiates = (acmp: AcmpCapability | undefined): boolean =>
  acmp?.accepts.includes(METHODS.offerRequest) === true && acmp.accepts.includes(METHODS.accept);

/** How long a running task may go without a heartbeat or chunk: three advertised intervals (Layer 1 §3.6). */
export function livenessWindow(acmp: AcmpCapability | undefined): number | undefined {
  const interval = acmp?.features.heartbeat_interval_ms;
  return typeof interval === 'number' && interval > 0 ? 3 * interval : undefined;
}

interface Slot {
  readonly opening: Promise<ProviderConnection>;
  connection?: ProviderConnection;
}

export class ProviderPool {
  /** The providers that serve the run: those configured, else the built-in provider. */
  readonly providers: readonly ProviderConfig[];
  private readonly byCapability = new Map<string, readonly ProviderConfig[]>();
  /** By entry rather than id, so two entries with one id stay two providers. */
  private readonly slots = new Map<ProviderConfig, Slot>();
  private readonly closing: Promise<void>[] = [];
  private closed = false;

  constructor(
    providers: readonly ProviderConfig[],
    private readonly connect: Connector,
  ) {
    this.providers = servingProviders(providers);
  }

  /** The providers that may take `capability`, in the providers list's order (pricing.ts `mayOffer`). */
  candidates(capability: string): readonly ProviderConfig[] {
    let found = this.byCapability.get(capability);
    if (found === undefined) {
      found = this.providers.filter((provider) => mayOffer(provider, capability));
      this.byCapability.set(capability, found);
    }
    return found;
  }

  /** The run's connection to `provider` when it is open. */
  opened(provider: ProviderConfig): ProviderConnection | undefined {
    return this.closed ? undefined : this.slots.get(provider)?.connection;
  }

  /** The run's connection to `provider`, opened on first use; rejects with TransportError when it cannot open. */
  connection(provider: ProviderConfig): Promise<ProviderConnection> {
    if (this.closed) return Promise.reject(new TransportError('the run has ended'));
    const existing = this.slots.get(provider);
    if (existing !== undefined) return existing.opening;
    // Through `then`, so a connector that throws instead of rejecting fails the same way.
    const opening = Promise.resolve().then(() => this.connect(provider));
    const slot: Slot = { opening };
    this.slots.set(provider, slot);
    opening.then(
      (connection) => {
        slot.connection = connection;
        if (this.closed) this.release(connection);
      },
      () => {
        // A failed opening is forgotten, so the next attempt opens again.
        if (this.slots.get(provider) === slot) this.slots.delete(provider);
      },
    );
    return opening;
  }

  /**
   * A connection in place of `broken`, which a transport failure ended: it is closed and a new one opened. Tasks
   * that saw the same connection fail share the replacement.
   */
  reconnect(provider: ProviderConfig, broken: ProviderConnection): Promise<ProviderConnection> {
    const slot = this.slots.get(provider);
    if (slot?.connection === broken) {
      this.slots.delete(provider);
      this.release(broken);
    }
    return this.connection(provider);
  }

  /** Closes every connection (those still opening when they open); never rejects. */
  async closeAll(): Promise<void> {
    this.closed = true;
    for (const slot of this.slots.values()) if (slot.connection !== undefined) this.release(slot.connection);
    this.slots.clear();
    await Promise.all(this.closing);
  }

  private release(connection: ProviderConnection): void {
    this.closing.push(
      Promise.resolve()
        .then(() => connection.close())
        .catch(() => undefined),
    );
  }
}
