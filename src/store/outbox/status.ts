import type { OutboxCounterSnapshot } from './counters.js';

/** The part of the status kept in memory: no database read (the watchdog asks every few seconds). */
export interface OutboxCommitState {
  /** Pending fixes not yet committed. */
  buffered: number;
  /** The bound in force: storage.maxFixes, lowered while the disk is short. */
  bound: number;
  lowDisk: boolean;
  lastCommitError?: { code: string; message: string };
  /** Monotonic ms of the first of the commits failing since the last success. */
  commitFailingSinceMonoMs?: number;
  /** The disk is full (SQLITE_FULL/ENOSPC seen, statfs has not shown room since). */
  diskFull?: { sinceWallMs?: number };
}

export interface OutboxStatus extends OutboxCounterSnapshot, OutboxCommitState {
  pending: number;
  /** The newest dead letter: when (wall ms), the platform's status and the reason. */
  lastDeadLetter?: LastDeadLetter;
  oldestPendingFixTime?: string;
  /** Newest fix time recorded minus the oldest pending one (GNSS time, independent of the host clock). */
  oldestPendingAgeMs?: number;
}

export interface LastDeadLetter {
  at: number;
  status?: number;
  reason: string;
}
