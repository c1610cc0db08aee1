import type { Database } from 'better-sqlite3';

/**
 * PRAGMA data_version: changes when another connection (the `outbox` command) committed. One
 * pragma per commit tick; it reads the WAL index only.
 */
export class DataVersion {
  #version = 0;

  /** Remembers the current version (the outbox's start). */
  read(db: Database): void {
    this.#version = db.pragma('data_version', { simple: true }) as number;
  }

  /** Whether another connection committed since the last call; false when the pragma cannot run. */
  changed(db: Database): boolean {
    let version: number;
    try {
      version = db.pragma('data_version', { simple: true }) as number;
    } catch {
      return false;
    }
    if (version === this.#version) return false;
    this.#version = version;
    return true;
  }
}
