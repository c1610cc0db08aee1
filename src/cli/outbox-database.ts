import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Database } from '../store/database.js';
import { cliLogger, loadCliConfig, openCliDatabase } from './context.js';

/** The agent's database for the `outbox` commands; a missing one is an error, not a new file. */
export function openOutboxDatabase(configPath: string | undefined): Database {
  const config = loadCliConfig(configPath);
  // The daemon commits about once a second; a write here waits for it rather than failing.
  return openCliDatabase(config, cliLogger(config, 'warn'), { mustExist: true, busyTimeoutMs: 10_000 });
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
