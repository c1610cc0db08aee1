import { createWriteStream, existsSync } from 'node:fs';
import { once } from 'node:events';
import { pino } from 'pino';
import { loadConfig } from '../config/load.js';
import { AgentError } from '../errors.js';
import { createLogger } from '../log.js';
import { databasePath, openDatabase, type Database } from '../store/database.js';

/** The agent's database for the `outbox` commands; a missing one is an error, not a new file. */
export function openOutboxDatabase(configPath: string | undefined): Database {
  const config = loadConfig(configPath === undefined ? {} : { path: configPath });
  const file = databasePath(config.dataDir);
  if (!existsSync(file))
    throw new AgentError('DATABASE_MISSING', `no database at ${file}: the agent has not run with this dataDir yet (check dataDir)`, {
      class: 'config',
    });
  const logger = createLogger({ level: 'warn', destination: pino.destination({ dest: 2, sync: true }) });
  // The daemon commits about once a second; a write here waits for it rather than failing.
  return openDatabase({ dataDir: config.dataDir, logger, busyTimeoutMs: 10_000 });
}

/** Writes one JSON line per item to `file` (0600: positions are personal data) or stdout for '-'. */
export async function writeLines<T extends { kind: string }>(file: string, items: Iterable<T>, each: (item: T) => void): Promise<void> {
  const out = file === '-' ? process.stdout : createWriteStream(file, { mode: 0o600 });
  let closed = false;
  out.on('error', () => (closed = true)); // a reader that went away (| head) ends the export
  for (const item of items) {
    if (closed) break;
    each(item);
    if (!out.write(`${JSON.stringify(item)}\n`)) await Promise.race([once(out, 'drain'), once(out, 'close')]);
  }
  if (out !== process.stdout) {
    out.end();
    await once(out, 'close');
  }
}
