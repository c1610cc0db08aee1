import type { Database } from 'better-sqlite3';
import type { Logger } from '../../log.js';
import { eventIdKey, seqsOfEventIds, undelivered, type HeldFixes } from '../held.js';
import { errInfo } from './commit-health.js';
import type { OutboxMemory } from './memory.js';
import type { OutboxStatements } from './statements.js';

/**
 * The outbox's side of a swap (held.ts): what it gives up when its database goes away, what it
 * holds for the outbox before it, and deliveries named by event id.
 */

/**
 * Takes what only memory knows, the fixes not committed yet and the deliveries since the last
 * delete, by event id.
 */
export function takeHeld(m: OutboxMemory, st: OutboxStatements): HeldFixes {
  const rows = m.buffer;
  m.buffer = [];
  const state = m.withCommit.map((w) => w.write);
  m.withCommit = [];
  const delivered = new Set<string>();
  for (const seq of m.delivered) {
    try {
      const id = st.eventId.get(seq)?.event_id;
      if (id) delivered.add(eventIdKey(id));
    } catch {
      // The database is unreadable: that fix is sent again, under its own id.
    }
  }
  return { rows, delivered, state };
}

/** An earlier outbox's held fixes, held after this one's own, renumbered, with their event ids. */
export function hold(m: OutboxMemory, held: HeldFixes): void {
  const rows = undelivered(held).map((r) => ({ ...r, seq: m.nextSeq++ }));
  m.buffer = [...m.buffer, ...rows];
  // Written once every held row is committed: the state may have been made after any of them.
  const seq = rows.at(-1)?.seq;
  for (const write of held.state ?? []) m.withCommit.push({ seq, write });
}

/**
 * Marks the fixes of these event ids delivered: buffered ones are dropped, stored ones wait for the
 * next delete. Returns how many were found.
 */
export function matchDelivered(m: OutboxMemory, db: Database, ids: ReadonlySet<string>, logger: Logger): number {
  if (ids.size === 0) return 0;
  const before = m.buffer.length;
  m.buffer = m.buffer.filter((r) => !ids.has(eventIdKey(r.event_id)));
  let found = before - m.buffer.length;
  try {
    for (const seq of seqsOfEventIds(db, ids)) {
      if (m.delivered.has(seq) || m.dead.has(seq)) continue;
      m.delivered.add(seq);
      found++;
    }
  } catch (e) {
    logger.warn({ err: errInfo(e) }, 'deliveries by event id could not be matched with the stored fixes: they are sent again');
  }
  return found;
}

/** The seq of an event id that is still queued, held or stored; undefined when the database cannot say. */
export function seqOfEventId(m: OutboxMemory, db: Database, id: string): number | undefined {
  const held = m.buffer.find((r) => eventIdKey(r.event_id) === id);
  if (held) return held.seq;
  try {
    return seqsOfEventIds(db, new Set([id])).find((seq) => !m.gone(seq));
  } catch {
    return undefined;
  }
}
