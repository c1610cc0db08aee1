import type { StoredToken } from './token-records.js';
import type { BootClock } from '../../system/boot-clock.js';
import type { TokenPair } from './token-pair.js';

/** The token pair a TokenManager uses, and the generation it was stored (or is to be stored) as. */
export interface HeldToken {
  pair: TokenPair;
  generation: number;
  /** Receipt on the boot clock; undefined when unknown (stored before the last reboot). */
  receivedAtMs: number | undefined;
}

/** A stored pair to hold; its receipt time counts only when it was stamped in this boot. */
export function heldFromStored(stored: StoredToken, bootClock: BootClock): HeldToken {
  const sameBoot = stored.bootId === bootClock.bootId && stored.bootMs !== undefined && stored.bootMs <= bootClock.nowMs();
  return { pair: stored.pair, generation: stored.generation, receivedAtMs: sameBoot ? stored.bootMs : undefined };
}
