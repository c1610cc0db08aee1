import type { OutboxCommitState } from '../store/outbox.js';
import type { DiskSummary } from './snapshot.js';

/** What the daemon adds to the disk section: a full disk, failing commits, the ballast. */
export type StoreView = Pick<DiskSummary, 'full' | 'fullSince' | 'heldInMemory' | 'commitFailing' | 'ballast'>;

export function storeView(o: OutboxCommitState, ballast: boolean | undefined, nowMonoMs: number): StoreView {
  const v: StoreView = {};
  if (o.diskFull) {
    v.full = true;
    if (o.diskFull.sinceWallMs !== undefined) v.fullSince = o.diskFull.sinceWallMs;
  }
  if (o.buffered > 0) v.heldInMemory = o.buffered;
  if (o.lastCommitError && o.commitFailingSinceMonoMs !== undefined)
    v.commitFailing = {
      code: o.lastCommitError.code,
      message: o.lastCommitError.message,
      forS: Math.max(0, (nowMonoMs - o.commitFailingSinceMonoMs) / 1000),
    };
  if (ballast !== undefined) v.ballast = ballast;
  return v;
}
