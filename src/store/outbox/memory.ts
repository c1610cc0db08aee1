import type { StateSource, StateWrite } from '../../fix/fix.js';
import { DeadLetterQueue } from './dead-letter-queue.js';
import type { OutboxRow } from './row.js';

/**
 * What the outbox knows only in memory between two commits: the fixes recorded and not committed
 * yet, the deliveries and dead letters since the last commit, and the rows the table holds. The
 * outbox, its committer (committer.ts) and its held rows (held-rows.ts) share this one copy.
 */
export class OutboxMemory {
  /** Recorded and not committed yet, seqs ascending. */
  buffer: OutboxRow[] = [];
  /** Delivered since the last delete of delivered rows: their rows are still in the table. */
  readonly delivered = new Set<number>();
  readonly dead = new DeadLetterQueue();
  committedCount = 0;
  nextSeq = 1;
  /** The newest committed row, cached: the live lane asks for it before every request. null = none; undefined = unknown. */
  newestCommitted: OutboxRow | null | undefined;
  /**
   * State writes of vehicle events (recordEvent), each with the seq of its event's row: written in
   * the transaction that commits that row (or a later one), never before it. seq undefined: no row.
   */
  withCommit: { seq: number | undefined; write: StateWrite }[] = [];
  /** The state that changes between events (the motion tracker's), written with commits when due. */
  stateSource: StateSource | undefined;

  /** Delivered or dead-lettered since the last commit: its row is still there, but it is not pending. */
  gone(seq: number): boolean {
    return this.delivered.has(seq) || this.dead.has(seq);
  }

  pendingCount(): number {
    return this.committedCount - this.delivered.size - this.dead.pendingCommitted() + this.buffer.length;
  }
}
