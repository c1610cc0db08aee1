import type { OutboxEntry } from '../store/outbox/row.js';

/** What the uploader and its lanes need from the outbox. */
export interface UploadQueue {
  newest(): OutboxEntry | undefined;
  after(afterSeq: number, limit: number): OutboxEntry[];
  delivered(seq: number): void;
  deadLetter(entry: OutboxEntry, status: number | undefined, error: string): void;
  onChange(listener: () => void): void;
  /** Grows when another process changed the outbox (requeued dead letters). */
  externalChanges?(): number;
}
