import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { databasePath, openDatabase } from '../src/store/database.js';
import { silentLogger } from '../src/log.js';

/**
 * A database of `rows` queued fixes in `dataDir`, checkpointed and closed, with `damaged` outbox
 * pages overwritten in the middle of the file (what a card's bad block does): the salvage's input.
 * Returns the file's size in bytes.
 */
export function buildDamagedDatabase(dataDir: string, rows: number, damaged: number[] = [0.3, 0.5, 0.7]): number {
  const db = openDatabase({ dataDir, logger: silentLogger() });
  const insert = db.prepare(
    'INSERT INTO outbox (seq, event_id, fix_time, lat_e7, lon_e7, alt_cm, speed_cms, track_cdeg, hdop_c, sats, flags) VALUES (?,?,?,?,?,?,?,?,?,?,?)',
  );
  db.transaction(() => {
    for (let i = 1; i <= rows; i++) {
      const id = Buffer.alloc(16);
      id.writeUInt32BE(i, 0);
      id.writeUInt32BE(i * 7, 8);
      insert.run(i, id, 1.7e12 + i * 100, 520_000_000 + i, 50_000_000 + i, 325, 1250, 8750, 80, 9, 0);
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  const file = databasePath(dataDir);
  const size = statSync(file).size;
  const fd = openSync(file, 'r+');
  try {
    for (const at of damaged) writeSync(fd, Buffer.alloc(1024, 0xa5), 0, 1024, Math.floor((size * at) / 1024) * 1024);
  } finally {
    closeSync(fd);
  }
  return size;
}
