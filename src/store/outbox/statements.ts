import type { Database, Statement } from 'better-sqlite3';
import { ROW_COLUMNS, type OutboxRow } from './row.js';

/** The outbox table's statements, prepared once at start. */
export interface OutboxStatements {
  insert: Statement<OutboxRow>;
  del: Statement<[number]>;
  delRange: Statement<[number, number]>;
  newest: Statement<[], OutboxRow>;
  after: Statement<[number, number], OutboxRow>;
  oldest: Statement<[], { fix_time: number }>;
  count: Statement<[], { n: number }>;
  eventId: Statement<[number], { event_id: Buffer }>;
}

export function prepareOutboxStatements(db: Database): OutboxStatements {
  return {
    insert: db.prepare(
      `INSERT INTO outbox (${ROW_COLUMNS}) VALUES (@seq, @event_id, @fix_time, @lat_e7, @lon_e7, @alt_cm, @speed_cms, @track_cdeg, @hdop_c, @sats, @flags)`,
    ),
    del: db.prepare('DELETE FROM outbox WHERE seq = ?'),
    delRange: db.prepare('DELETE FROM outbox WHERE seq BETWEEN ? AND ?'),
    newest: db.prepare(`SELECT ${ROW_COLUMNS} FROM outbox ORDER BY seq DESC LIMIT 1`),
    after: db.prepare(`SELECT ${ROW_COLUMNS} FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?`),
    oldest: db.prepare('SELECT fix_time FROM outbox ORDER BY seq LIMIT 1'),
    count: db.prepare('SELECT count(*) AS n FROM outbox'),
    eventId: db.prepare('SELECT event_id FROM outbox WHERE seq = ?'),
  };
}
