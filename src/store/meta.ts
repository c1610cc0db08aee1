import type { Database } from 'better-sqlite3';

/** Key/value facts and named counters that outlive a process (tables `meta` and `counters`). */
export class MetaStore {
  readonly #get;
  readonly #set;
  readonly #del;
  readonly #incr;
  readonly #counter;
  readonly #all;

  constructor(db: Database) {
    this.#get = db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?');
    this.#set = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value');
    this.#del = db.prepare('DELETE FROM meta WHERE key = ?');
    this.#incr = db.prepare(
      'INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = value + excluded.value',
    );
    this.#counter = db.prepare<[string], { value: number }>('SELECT value FROM counters WHERE name = ?');
    this.#all = db.prepare<[], { name: string; value: number }>('SELECT name, value FROM counters ORDER BY name');
  }

  get(key: string): string | undefined {
    return this.#get.get(key)?.value;
  }

  getJson<T>(key: string): T | undefined {
    const v = this.get(key);
    return v === undefined ? undefined : (JSON.parse(v) as T);
  }

  set(key: string, value: string): void {
    this.#set.run(key, value);
  }

  setJson(key: string, value: unknown): void {
    this.set(key, JSON.stringify(value));
  }

  delete(key: string): void {
    this.#del.run(key);
  }

  increment(name: string, by = 1): void {
    this.#incr.run(name, by);
  }

  counter(name: string): number {
    return this.#counter.get(name)?.value ?? 0;
  }

  counters(): Record<string, number> {
    return Object.fromEntries(this.#all.all().map((r) => [r.name, r.value]));
  }
}
