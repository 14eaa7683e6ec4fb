// Stateless quoting (Layer 6 §3): an offer_id carries its own terms and an HMAC under a key of this process, so an
// accept checks it without any stored offer. State begins at accept: the accepted ids, kept while they are valid.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  type AcceptParams,
  type AcceptResult,
  ACMP_ERRORS,
  AcmpError,
  type Offer,
  type OfferRequestParams,
} from '../../protocol/acmpMessages';

/** What an offer_id says of its offer: enough for accept to answer without having stored it. */
interface OfferTerms {
  readonly capability: string;
  readonly price_cu: number;
  readonly valid_until_ms: number;
}

/**
 * Accepted ids kept at most. An id is kept until its offer expires (after that a repeat gets -34002 anyway), so this
 * bounds only a flood of accepts within one validity window; past it the oldest are forgotten.
 */
const ACCEPTED_KEPT = 100_000;
/** Offer ids longer than this are refused unread: no one of ours comes near it. */
const OFFER_ID_CHARS = 1_000;

const notFound = (offerId: string) =>
  new AcmpError(ACMP_ERRORS.offer_not_found, 'Offer not found: this provider did not make this offer', {
    offer_id: offerId.slice(0, 100),
  });

export interface OfferBookOptions {
  /** The longest an offer holds, in ms; a buyer's `offer_valid_ms` may shorten it. */
  readonly validMs: number;
  /** The latency the provider commits to (`latency_sla_ms`), when it has one. */
  readonly latencyMs?: number;
  /** The clock of validity, epoch ms. */
  readonly now: () => number;
}

/** Makes offers and takes them back; one instance is one provider, and its key dies with the process. */
export class OfferBook {
  private readonly key = randomBytes(32);
  /** Accepted offer ids, in the order they were accepted, with when they expire. */
  private readonly accepted = new Map<string, number>();
  /** Offers issued so far: the nonce that makes each id unique under this process's key (no random bytes needed). */
  private issued = 0;

  constructor(private readonly options: OfferBookOptions) {}

  /**
   * The offer for `request`, which the provider agreed to serve at `priceCu`: it holds for the shorter of the buyer's
   * `offer_valid_ms` and the provider's window, and carries the provider's latency and the proof method asked for.
   */
  quote(request: OfferRequestParams, priceCu: number): Offer {
    const { validMs, latencyMs, now } = this.options;
    const requested = request.offer_valid_ms;
    const terms = {
      capability: request.capability,
      price_cu: priceCu,
      valid_until_ms: now() + (requested === undefined ? validMs : Math.min(requested, validMs)),
    };
    return {
      offer_id: this.issue(terms),
      ...terms,
      ...(latencyMs !== undefined && { latency_sla_ms: latencyMs }),
      ...(request.proof_method !== undefined && { proof_method: request.proof_method }),
    };
  }

  /**
   * `acmp/accept`: the Ack with the offer's price, once; AcmpError -34001 (not an offer of this provider), -34003
   * (accepted already) or -34002 (expired).
   */
  accept({ offer_id: offerId, escrow_id: escrowId }: AcceptParams): AcceptResult {
    const { price_cu: priceCu } = this.take(offerId);
    return escrowId === undefined
      ? { offer_id: offerId, price_cu: priceCu }
      : { offer_id: offerId, escrow_id: escrowId, price_cu: priceCu };
  }

  /** A new offer_id for these terms: `<terms>.<mac>`, both base64url; the nonce makes each one unique. */
  private issue(terms: OfferTerms): string {
    const body = Buffer.from(
      JSON.stringify({
        c: terms.capability,
        p: terms.price_cu,
        v: terms.valid_until_ms,
        n: this.issued++,
      }),
    ).toString('base64url');
    return `${body}.${this.mac(body).toString('base64url')}`;
  }

  /** The terms of `offerId`, taken once (see accept). */
  private take(offerId: string): OfferTerms {
    const terms = this.read(offerId);
    if (terms === undefined) throw notFound(offerId);
    const now = this.options.now();
    this.forgetExpired(now);
    if (this.accepted.has(offerId)) {
      throw new AcmpError(ACMP_ERRORS.already_accepted, 'Offer already accepted: offers are single-use', {
        offer_id: offerId,
      });
    }
    if (now > terms.valid_until_ms) {
      throw new AcmpError(ACMP_ERRORS.offer_expired, 'Offer expired: request a new quote', {
        offer_id: offerId,
        valid_until_ms: terms.valid_until_ms,
      });
    }
    this.accepted.set(offerId, terms.valid_until_ms);
    if (this.accepted.size > ACCEPTED_KEPT) this.accepted.delete(this.accepted.keys().next().value as string);
    return terms;
  }

  private mac(body: string): Buffer {
    return createHmac('sha256', this.key).update(body).digest();
  }

  /** The terms of an id this provider issued, or undefined for anything else (tampered, foreign, garbage). */
  private read(offerId: string): OfferTerms | undefined {
    if (offerId.length > OFFER_ID_CHARS) return undefined;
    const [body, mac, ...rest] = offerId.split('.');
    if (body === undefined || mac === undefined || rest.length > 0) return undefined;
    const given = Buffer.from(mac, 'base64url');
    const expected = this.mac(body);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    // Authentic, so written by `issue`: its shape is known.
    const { c, p, v } = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as {
      c: string;
      p: number;
      v: number;
    };
    return { capability: c, price_cu: p, valid_until_ms: v };
  }

  /** Drops accepted ids from the oldest on while they have expired. */
  private forgetExpired(now: number): void {
    for (const [offerId, validUntil] of this.accepted) {
      if (validUntil >= now) return;
      this.accepted.delete(offerId);
    }
  }
}
