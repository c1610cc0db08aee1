import type { Database } from 'better-sqlite3';

/**
 * The schema, as an ordered list of migrations. `PRAGMA user_version` records how many have run.
 * Never edit a migration that has shipped: add the next one. test/store/migrations.test.ts migrates
 * an empty database and a database of every earlier version to the latest.
 */
export interface Migration {
  version: number;
  description: string;
  up(db: Database): void;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'meta, counters, tokens, device identity and registration, outbox, dead letters',
    up(db) {
      db.exec(`
        -- Small facts that outlive a process: last upload success, credentials-rejected-until, ...
        CREATE TABLE meta (
          key   TEXT PRIMARY KEY,
          value TEXT NOT NULL
        ) WITHOUT ROWID;

        -- Monotonic counters shown by status (sent, thinned, refreshes, password grants, ...).
        CREATE TABLE counters (
          name  TEXT PRIMARY KEY,
          value INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;

        -- The platform's token pair (docs/platform-contract.md, Tokens). One row; generation grows with every
        -- rotation so that two processes sharing the database can tell whether the pair moved on.
        CREATE TABLE token_pair (
          id            INTEGER PRIMARY KEY CHECK (id = 1),
          access_token  TEXT NOT NULL,
          refresh_token TEXT NOT NULL,
          id_token      TEXT,
          token_type    TEXT NOT NULL,
          expires_in_s  INTEGER NOT NULL,
          obtained_at   INTEGER NOT NULL,   -- wall clock ms at receipt, informational only
          generation    INTEGER NOT NULL
        );

        -- The externalDeviceId chosen on first start and where it came from; never changes after.
        CREATE TABLE device_identity (
          id                 INTEGER PRIMARY KEY CHECK (id = 1),
          external_device_id TEXT NOT NULL,
          source             TEXT NOT NULL,
          chosen_at          INTEGER NOT NULL
        );

        -- The platform's answer to the last successful upsert, and the hash of the device section
        -- it was made from (re-register only when the configuration changes).
        CREATE TABLE device_registration (
          id                 INTEGER PRIMARY KEY CHECK (id = 1),
          external_system_id TEXT NOT NULL,
          external_device_id TEXT NOT NULL,
          device_uuid        TEXT NOT NULL,
          config_hash        TEXT NOT NULL,
          response_json      TEXT NOT NULL,
          registered_at      INTEGER NOT NULL
        );

        -- Recorded fixes waiting for delivery, oldest first by seq. Rows are deleted once delivered.
        CREATE TABLE outbox (
          seq         INTEGER PRIMARY KEY,
          event_id    TEXT NOT NULL,
          fix_time    INTEGER NOT NULL,
          fix_json    TEXT NOT NULL,
          transition  INTEGER NOT NULL DEFAULT 0,
          attempts    INTEGER NOT NULL DEFAULT 0
        );

        -- Events the platform refused for good (400), with its answer; never retried automatically.
        CREATE TABLE dead_letter (
          seq         INTEGER PRIMARY KEY,
          event_id    TEXT NOT NULL,
          fix_time    INTEGER NOT NULL,
          fix_json    TEXT NOT NULL,
          status      INTEGER,
          error       TEXT NOT NULL,
          failed_at   INTEGER NOT NULL
        );
      `);
    },
  },
  {
    version: 2,
    description: 'compact outbox rows: 16-byte event id and scaled integer columns instead of JSON',
    up(db) {
      // Bytes written per recorded fix are the SD card's wear (the target: at most 200 at 10 Hz).
      // A fix as JSON text plus a 36-character id is ~250 bytes a row; as a binary id and varint
      // integers it is ~60, so a one-second batch at 10 Hz fits in one 1 KiB page. Units are in the
      // column names (1e-7 degrees as u-blox UBX uses; cm, cm/s, centidegrees, hundredths of HDOP).
      db.exec(`
        CREATE TABLE outbox_compact (
          seq         INTEGER PRIMARY KEY,   -- record order
          event_id    BLOB NOT NULL,         -- UUID v5 (16 bytes), fixed at record time
          fix_time    INTEGER NOT NULL,      -- epoch ms UTC from GNSS
          lat_e7      INTEGER NOT NULL,
          lon_e7      INTEGER NOT NULL,
          alt_cm      INTEGER,
          speed_cms   INTEGER,
          track_cdeg  INTEGER,
          hdop_c      INTEGER,
          sats        INTEGER,
          flags       INTEGER NOT NULL DEFAULT 0  -- 1 = moving/stopped transition (kept by thinning)
        );
        INSERT INTO outbox_compact (seq, event_id, fix_time, lat_e7, lon_e7, alt_cm, speed_cms, track_cdeg, hdop_c, sats, flags)
          SELECT seq, unhex(replace(event_id, '-', '')), fix_time,
                 CAST(round(json_extract(fix_json, '$.lat') * 1e7) AS INTEGER),
                 CAST(round(json_extract(fix_json, '$.lon') * 1e7) AS INTEGER),
                 CAST(round(json_extract(fix_json, '$.altMSL') * 100) AS INTEGER),
                 CAST(round(json_extract(fix_json, '$.speed') * 100) AS INTEGER),
                 CAST(round(json_extract(fix_json, '$.track') * 100) AS INTEGER),
                 CAST(round(json_extract(fix_json, '$.hdop') * 100) AS INTEGER),
                 json_extract(fix_json, '$.satellitesUsed'),
                 CASE WHEN transition <> 0 THEN 1 ELSE 0 END
          FROM outbox
          WHERE json_valid(fix_json) AND json_extract(fix_json, '$.lat') IS NOT NULL AND json_extract(fix_json, '$.lon') IS NOT NULL
            AND length(unhex(replace(event_id, '-', ''))) = 16;
        DROP TABLE outbox;
        ALTER TABLE outbox_compact RENAME TO outbox;
      `);
    },
  },
];

export const LATEST_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

/** Runs every migration above the database's user_version, each in its own transaction. */
export function migrate(db: Database, target: number = LATEST_VERSION): { from: number; to: number } {
  const from = db.pragma('user_version', { simple: true }) as number;
  if (from > LATEST_VERSION) {
    throw new Error(
      `database schema version ${from} is newer than this agent knows (${LATEST_VERSION}); upgrade the agent instead of downgrading`,
    );
  }
  for (const m of MIGRATIONS) {
    if (m.version <= from || m.version > target) continue;
    db.transaction(() => {
      m.up(db);
      db.pragma(`user_version = ${m.version}`);
    })();
  }
  return { from, to: db.pragma('user_version', { simple: true }) as number };
}
