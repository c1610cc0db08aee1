import type { Database, Statement } from 'better-sqlite3';
import { StoreError, storeFaultOf, type StoreFaultKind } from '../errors.js';

/**
 * Every statement of a database opened by openDatabase() goes through guardDatabase(), which turns
 * the two faults of the database file that no retry cures (StoreError, recognised in errors.ts)
 * into a StoreError with a stable code and tells the store's owner (the agent) at once.
 */

/** `e` as a StoreError when it is a store fault; anything else unchanged. */
export function asStoreError(e: unknown): unknown {
  if (e instanceof StoreError) return e;
  const kind = storeFaultOf(e);
  if (!kind) return e;
  const code = String((e as { code?: unknown }).code);
  const message = e instanceof Error ? e.message : String(e);
  return new StoreError(
    kind,
    code,
    kind === 'disk-full'
      ? `the data directory's file system is full (${code}: ${message})`
      : `the database file is damaged (${code}: ${message})`,
    e,
  );
}

export type StoreFaultListener = (kind: StoreFaultKind, error: StoreError) => void;

const RUNNERS = new Set(['run', 'get', 'all', 'iterate']);
const CHAINERS = new Set(['pluck', 'raw', 'expand', 'safeIntegers', 'bind']);

/**
 * Makes every statement prepared on `db` (and its exec and pragma) throw StoreError for the two
 * faults above and call `onFault` first, so that no writer (outbox, token store, device store) has
 * to recognise SQLite codes itself. The database object is the same one: callers keep its type.
 */
export function guardDatabase(db: Database, onFault: StoreFaultListener): Database {
  const told = new WeakSet<StoreError>();
  const fault = (e: unknown): unknown => {
    const err = asStoreError(e);
    // Told once, however many wrappers (statement, transaction) it passes through.
    if (err instanceof StoreError && !told.has(err)) {
      told.add(err);
      try {
        onFault(err.kind, err);
      } catch {
        // a listener's own failure must not hide the store fault
      }
    }
    return err;
  };
  const wrap = <A extends unknown[], R>(fn: (...args: A) => R, self: unknown): ((...args: A) => R) => {
    return (...args: A): R => {
      try {
        return fn.apply(self, args);
      } catch (e) {
        throw fault(e);
      }
    };
  };
  const guardStatement = (st: Statement): Statement => {
    const proxy: Statement = new Proxy(st, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== 'function' || typeof prop !== 'string') return value;
        if (RUNNERS.has(prop)) return wrap(value as (...a: unknown[]) => unknown, target);
        if (CHAINERS.has(prop))
          return (...args: unknown[]) => {
            (value as (...a: unknown[]) => unknown).apply(target, args);
            return proxy;
          };
        return (value as (...a: unknown[]) => unknown).bind(target);
      },
    });
    return proxy;
  };
  const prepare = db.prepare.bind(db);
  const exec = db.exec.bind(db);
  const pragma = db.pragma.bind(db);
  // Preparing reads the schema, which can itself be damaged.
  (db as { prepare: unknown }).prepare = (source: string) => guardStatement(wrap(prepare, db)(source) as Statement);
  (db as { exec: unknown }).exec = (source: string) => {
    wrap(exec, db)(source);
    return db;
  };
  (db as { pragma: unknown }).pragma = wrap(pragma, db);
  // better-sqlite3 runs BEGIN and COMMIT through statements of its own, and in WAL mode COMMIT is
  // where the pages are written: where SQLITE_FULL shows up.
  const transaction = db.transaction.bind(db);
  (db as { transaction: unknown }).transaction = (fn: (...args: unknown[]) => unknown) => {
    const t = transaction(fn) as unknown as ((...args: unknown[]) => unknown) & Record<string, (...args: unknown[]) => unknown>;
    const guarded = wrap(t, undefined);
    for (const variant of ['default', 'deferred', 'immediate', 'exclusive'])
      Object.defineProperty(guarded, variant, { value: wrap(t[variant]!, undefined) });
    Object.defineProperty(guarded, 'database', { value: db });
    return guarded;
  };
  return db;
}
