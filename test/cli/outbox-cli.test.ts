import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';
import { writeConfig } from '../status/fixtures.js';
import { fixAt, openOutbox } from '../store/outbox/helpers.js';

/** A database as a stopped daemon leaves it: `pending` fixes queued, `dead` of them dead-lettered first. */
async function seeded(pending: number, dead: number): Promise<{ config: string; dataDir: string; deadIds: string[] }> {
  const dir = tempDir();
  const config = writeConfig(dir);
  const dataDir = path.join(dir, 'data');
  const o = await openOutbox(dataDir);
  for (let i = 0; i < pending + dead; i++) o.outbox.record(fixAt(i));
  o.outbox.flush();
  const entries = o.outbox.after(Number.MIN_SAFE_INTEGER, dead);
  for (const e of entries) o.outbox.deadLetter(e, 400, `event upload: HTTP 400 (creationDate: refused)`);
  await o.outbox.stop();
  o.db.close();
  return { config, dataDir, deadIds: entries.map((e) => e.eventId) };
}

const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { kind: string; eventId: string });

describe('telematics-agent outbox (daemon stopped)', () => {
  it('export writes pending and dead-lettered fixes as JSON lines, to stdout or a 0600 file', async () => {
    const { config, dataDir, deadIds } = await seeded(4, 2);
    const all = await runCli(['outbox', 'export', '--config', config]);
    expect(all.code).toBe(0);
    const rows = jsonLines(all.stdout);
    expect(rows.map((r) => r.kind)).toEqual(['pending', 'pending', 'pending', 'pending', 'dead-letter', 'dead-letter']);
    expect(rows.slice(4).map((r) => r.eventId)).toEqual(deadIds);
    expect(all.stderr).toMatch(/exported 4 pending and 2 dead-lettered fixes/);

    const file = path.join(dataDir, '..', 'dead.jsonl');
    const dead = await runCli(['outbox', 'export', '--dead-letters', file, '--config', config]);
    expect(dead.code).toBe(0);
    expect(jsonLines(readFileSync(file, 'utf8')).map((r) => r.eventId)).toEqual(deadIds);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const pending = await runCli(['outbox', 'export', '--pending', '-', '--config', config]);
    expect(jsonLines(pending.stdout)).toHaveLength(4);
  });

  it('requeue-dead-letters puts them back with their original event ids and prints how many', async () => {
    const { config, deadIds } = await seeded(3, 2);
    const r = await runCli(['outbox', 'requeue-dead-letters', '--config', config]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^requeued 2 dead letters into the outbox/);
    const status = await runCli(['status', '--json', '--config', config]);
    expect(JSON.parse(status.stdout).outbox).toMatchObject({ pending: 5, deadLetters: 0 });
    const ids = jsonLines((await runCli(['outbox', 'export', '--pending', '--config', config])).stdout).map((x) => x.eventId);
    expect(ids.slice(0, 2)).toEqual(deadIds);
    expect(new Set(ids).size).toBe(5);
    const again = await runCli(['outbox', 'requeue-dead-letters', '--config', config]);
    expect(again.stdout).toMatch(/^requeued 0 dead letters/);
  });

  it('status shows the number of dead letters and the last reason', async () => {
    const { config } = await seeded(1, 3);
    const status = await runCli(['status', '--json', '--config', config]);
    expect(JSON.parse(status.stdout).outbox).toMatchObject({
      deadLetters: 3,
      lastDeadLetter: { status: 400, reason: 'event upload: HTTP 400 (creationDate: refused)' },
    });
    const human = await runCli(['status', '--config', config]);
    expect(human.stdout).toMatch(/dead letters 3/);
    expect(human.stdout).toMatch(/last dead letter .* ago \(host clock\): event upload: HTTP 400 \(creationDate/);
  });

  it('a data directory without a database is an error naming dataDir, not a new empty database', async () => {
    const dir = tempDir();
    const config = writeConfig(dir);
    const r = await runCli(['outbox', 'export', '--config', config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no database at .*check dataDir/);
  });
});
