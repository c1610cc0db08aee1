import type { QueuedFix } from '../fix/fix.js';

/** A queued fix as the uploader sees it: its place in the queue, and whether it marks a moving/stopped transition. */
export interface QueueEntry extends QueuedFix {
  seq: number;
  transition: boolean;
}

/** What the uploader and its lanes need from the outbox (src/store/outbox/ implements it). */
export interface UploadQueue {
  newest(): QueueEntry | undefined;
  after(afterSeq: number, limit: number): QueueEntry[];
  /** The platform has it: the entry itself, as newest()/after() gave it (its seq, and its event id). */
  delivered(entry: QueueEntry): void;
  deadLetter(entry: QueueEntry, status: number | undefined, error: string): void;
  onChange(listener: () => void): void;
  /**
   * The entry as the database of the moment numbers it (a store swap renumbers every row), or
   * undefined when that database holds no such row (delivered, dead-lettered) or none is attached.
   */
  renumber?(entry: QueueEntry): QueueEntry | undefined;
  /** Grows when another process changed the outbox (requeued dead letters). */
  externalChanges?(): number;
}
