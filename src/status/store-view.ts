import type { MetaStore } from '../store/meta.js';
import type { OutboxCommitState } from '../store/outbox/outbox.js';
import { SALVAGE_META_KEY, type SalvageFacts } from '../store/salvage.js';
import type { DiskSummary } from './snapshot.js';
import { DATA_DIR_FAULT_WORDS, dataDirFault } from '../system/data-dir-fault.js';

/** What the daemon adds to the disk section: a full disk, failing commits, the ballast. */
export type StoreView = Pick<DiskSummary, 'full' | 'fullSince' | 'heldInMemory' | 'commitFailing' | 'ballast' | 'repaired'>;

export function storeView(
  o: OutboxCommitState,
  ballast: boolean | undefined,
  nowMonoMs: number,
  /** The data directory: a failing commit is named by what the file system says (data-dir-fault.ts). */
  dataDir?: string,
): StoreView {
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
  if (v.commitFailing && dataDir !== undefined) {
    const fault = dataDirFault(dataDir, v.commitFailing.code);
    if (fault) v.commitFailing.reason = DATA_DIR_FAULT_WORDS[fault];
  }
  if (ballast !== undefined) v.ballast = ballast;
  return v;
}

/** The last salvage of a damaged database (database.ts replaceDamagedDatabase), as status shows it. */
export function repairedFacts(meta: Pick<MetaStore, 'get'>): DiskSummary['repaired'] {
  let f: SalvageFacts | undefined;
  try {
    const raw = meta.get(SALVAGE_META_KEY);
    f = raw === undefined ? undefined : (JSON.parse(raw) as SalvageFacts);
  } catch {
    return undefined;
  }
  if (!f || typeof f.at !== 'number') return undefined;
  return {
    at: f.at,
    reason: f.reason,
    movedTo: f.movedTo,
    salvaged: (f.outbox?.rows ?? 0) + (f.carried ?? 0),
    deadLetters: f.deadLetters?.rows ?? 0,
    unreadable: (f.outbox?.unreadable ?? 0) + (f.deadLetters?.unreadable ?? 0),
  };
}
