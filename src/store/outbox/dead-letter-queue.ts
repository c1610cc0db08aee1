import type { Database, Statement } from 'better-sqlite3';
import type { QueueEntry } from '../../upload/upload-queue.js';
import type { LastDeadLetter } from './status.js';

export interface PendingDeadLetter {
  entry: QueueEntry;
  /** Whether the fix has an outbox row to delete (a buffered fix was never committed). */
  committed: boolean;
  status: number | undefined;
  error: string;
  at: number;
}

/**
 * The outbox's dead letters: those refused since the last commit, waiting for it, and the dead_letter table.
 *
 * Dead letters are never deleted by the agent (only the newest 1,000 were kept, and a
 * platform refusing everything turned a backlog into that many): they take disk space like the
 * backlog and are bounded by it, through the outbox bound (bound.ts) and the free-disk
 * floor. `telematics-agent outbox requeue-dead-letters` puts them back (dead-letters.ts).
 */
export class DeadLetterQueue {
  /** Refused for good, to be moved to dead_letter by the next commit. */
  #pending: PendingDeadLetter[] = [];
  readonly #seqs = new Set<number>();
  #last: LastDeadLetter | undefined;
  #st!: {
    insert: Statement<[string, number, string, number | null, string, number]>;
    count: Statement<[], { n: number }>;
    last: Statement<[], { status: number | null; error: string; failed_at: number }>;
  };

  /** Prepares the statements and reads the newest dead letter (the outbox's start). */
  open(db: Database): void {
    this.#st = {
      // dead_letter numbers its own rows: outbox seqs may be reused once the outbox was empty.
      insert: db.prepare('INSERT INTO dead_letter (event_id, fix_time, fix_json, status, error, failed_at) VALUES (?, ?, ?, ?, ?, ?)'),
      count: db.prepare('SELECT count(*) AS n FROM dead_letter'),
      last: db.prepare('SELECT status, error, failed_at FROM dead_letter ORDER BY seq DESC LIMIT 1'),
    };
    this.loadLast();
  }

  has(seq: number): boolean {
    return this.#seqs.has(seq);
  }

  /** Seqs refused since the last commit. */
  get size(): number {
    return this.#seqs.size;
  }

  /** Waiting for the next commit, oldest first. */
  get pending(): readonly PendingDeadLetter[] {
    return this.#pending;
  }

  /** Of those waiting, the ones still counted in the outbox table. */
  pendingCommitted(): number {
    return this.#pending.filter((d) => d.committed).length;
  }

  add(d: PendingDeadLetter): void {
    this.#pending.push(d);
    this.#seqs.add(d.entry.seq);
  }

  /** Writes one dead letter; inside the commit's transaction. */
  write(d: PendingDeadLetter): void {
    const e = d.entry;
    this.#st.insert.run(e.eventId, e.time, JSON.stringify(e), d.status ?? null, d.error, d.at);
  }

  /** After COMMIT: the first `n` pending ones are in the table now. */
  committed(n: number): void {
    for (const d of this.#pending.slice(0, n)) this.#seqs.delete(d.entry.seq);
    this.#pending = this.#pending.slice(n);
  }

  /** Rows in dead_letter. */
  count(): number {
    return this.#st.count.get()!.n;
  }

  get last(): LastDeadLetter | undefined {
    return this.#last;
  }

  loadLast(): void {
    const r = this.#st.last.get();
    this.#last = r ? { at: r.failed_at, ...(r.status !== null ? { status: r.status } : {}), reason: r.error.slice(0, 300) } : undefined;
  }
}
