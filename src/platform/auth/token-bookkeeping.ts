import type { Logger } from '../../log.js';

/**
 * The code of a store failure for the log: the store's own (STORE_DISK_FULL and friends, issue
 * 11.2) or SQLite's (SQLITE_FULL, SQLITE_BUSY, SQLITE_IOERR_*) or the system's (ENOSPC).
 */
export function storeErrorCode(e: unknown): string {
  let cur: unknown = e;
  for (let i = 0; i < 4 && cur && typeof cur === 'object'; i++) {
    const { code, sqliteCode } = cur as { code?: unknown; sqliteCode?: unknown };
    if (typeof code === 'string') return typeof sqliteCode === 'string' && sqliteCode !== code ? `${code} (${sqliteCode})` : code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return e instanceof Error ? e.message : String(e);
}

/** A write the token lifecycle can do without (a note, the lock row): a failure is logged, not thrown. */
export function bookkeepingWrite(logger: Logger, what: string, write: () => void): boolean {
  try {
    write();
    return true;
  } catch (e) {
    logger.warn({ code: storeErrorCode(e), what }, 'token bookkeeping could not be written to the database; going on without it');
    return false;
  }
}
