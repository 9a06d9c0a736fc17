import type { DomainEvent } from '@state-relay/contracts';
import { DORMANT_AFTER_MS } from '../accounts-domain';
import type { KeyedEvent } from '@state-relay/domain';
import { mulberry32 } from './prng';

export interface AccountEventsOptions {
  accounts: number;
  /** At least 1: each account's first event is `signed_up`, the rest `activity` or `payment`. */
  eventsPerAccount: number;
  seed: number;
  /** Epoch ms that "dormant" is measured from (use it as the sweep's asOf). */
  now: number;
  /** Share of accounts, 0..1, whose last activity is more than 30 days before `now`. */
  dormantFraction: number;
}

const DAY = 24 * 60 * 60 * 1000;
/** The oldest event is at most this far before `now`: 180 days idle plus a year of history. */
const HISTORY_MS = 545 * DAY;

/**
 * A deterministic demo stream. Exactly round(accounts * dormantFraction) accounts (chosen
 * by the seed) last act 31-180 days before `now`, the others 0-29 days before, so a
 * 30-day sweep at asOf = now is unambiguous. Keys are `acct-` plus a zero-padded index,
 * so key order is index order. The list is ordered by time (ties by key, then sequence);
 * each account's own events stay in order, starting with `signed_up`.
 */
export function generateAccountEvents(options: AccountEventsOptions): KeyedEvent[] {
  const { accounts, eventsPerAccount, seed, now, dormantFraction } = options;
  if (!Number.isSafeInteger(accounts) || accounts < 0) throw new RangeError('accounts must be a non-negative integer');
  if (!Number.isSafeInteger(eventsPerAccount) || eventsPerAccount < 1) {
    throw new RangeError('eventsPerAccount must be an integer of at least 1 (the signed_up event)');
  }
  if (!Number.isFinite(seed)) throw new RangeError('seed must be a finite number');
  if (!Number.isSafeInteger(now) || now < HISTORY_MS) {
    throw new RangeError(`now must be an integer epoch ms of at least ${HISTORY_MS} (events reach back 545 days)`);
  }
  if (!(dormantFraction >= 0 && dormantFraction <= 1)) throw new RangeError('dormantFraction must be between 0 and 1');

  const random = mulberry32(seed);
  const dormant = chooseDormant(accounts, Math.round(accounts * dormantFraction), random);
  const width = Math.max(6, String(Math.max(accounts - 1, 0)).length);
  const all: Array<KeyedEvent & { seq: number }> = [];
  for (let i = 0; i < accounts; i++) {
    const key = `acct-${String(i).padStart(width, '0')}`;
    const lastAt = dormant.has(i)
      ? now - DORMANT_AFTER_MS - DAY - Math.floor(random() * 149 * DAY)
      : now - Math.floor(random() * 29 * DAY);
    const signedUpAt = eventsPerAccount === 1 ? lastAt : lastAt - Math.floor(random() * 365 * DAY);
    // Times in between, sorted; the last event is at lastAt, so lastActiveAt ends there.
    const middle = Array.from(
      { length: Math.max(eventsPerAccount - 2, 0) },
      () => signedUpAt + Math.floor(random() * (lastAt - signedUpAt + 1)),
    ).sort((a, b) => a - b);
    const times = eventsPerAccount === 1 ? [signedUpAt] : [signedUpAt, ...middle, lastAt];
    times.forEach((at, seq) => {
      all.push({ key, seq, event: seq === 0 ? signedUp(key, at) : usage(key, seq, at, random) });
    });
  }
  all.sort((a, b) => a.event.at - b.event.at || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) || a.seq - b.seq);
  return all.map(({ key, event }) => ({ key, event }));
}

function chooseDormant(accounts: number, count: number, random: () => number): Set<number> {
  const indexes = Array.from({ length: accounts }, (_, i) => i);
  for (let i = indexes.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [indexes[i], indexes[j]] = [indexes[j]!, indexes[i]!];
  }
  return new Set(indexes.slice(0, count));
}

function signedUp(key: string, at: number): DomainEvent {
  return { type: 'signed_up', at, data: {}, id: `${key}-0` };
}

function usage(key: string, seq: number, at: number, random: () => number): DomainEvent {
  const id = `${key}-${seq}`;
  if (random() < 0.3) {
    const amount = Math.floor(random() * 25_000) - 5_000; // minor units, -50.00 .. 199.99
    return { type: 'payment', at, data: { amount }, id };
  }
  return { type: 'activity', at, data: {}, id };
}
