import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDecoder } from '../../src/gnss/decoder.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';

/** Every argument error says what is wrong; `drive --minutes N` lasts N minutes. */
describe('usage errors through the built CLI', () => {
  it('an error an action finds in its arguments is printed, exit 2 (sim --user without --password)', async () => {
    const r = await runCli(['sim', '--user', 'bob'], { timeoutMs: 20_000 });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('give one --password per --user, in the same order');
    expect(r.stdout).toBe('');
  });

  it('drive --start with a time that is not ISO 8601: printed, exit 2, no file', async () => {
    const out = path.join(tempDir(), 'drive.nmea');
    const r = await runCli(['drive', '--out', out, '--start', 'yesterday']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--start: "yesterday" is not an ISO 8601 time');
  });

  it("commander's own errors are printed once, exit 2", async () => {
    const r = await runCli(['drive', '--out', '/dev/null', '--minutes', 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr.match(/must be a number from 0\.5 to 1440/g)).toHaveLength(1);
    const unknown = await runCli(['no-such-command']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'no-such-command'");
  });
});

describe('drive --minutes N', () => {
  it.each([
    [10, 1],
    [3, 5],
  ])('%d minutes at %d Hz is an N-minute log, and says so', async (minutes, hz) => {
    const out = path.join(tempDir(), 'drive.nmea');
    const r = await runCli(['drive', '--out', out, '--minutes', String(minutes), '--hz', String(hz)]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${minutes * 60 * hz} epochs`);
    expect(r.stdout).toContain(`${minutes.toFixed(1)} min at ${hz} Hz`);
    // The log itself: first and last fix exactly N minutes (less one epoch) apart.
    const dec = createDecoder();
    const fixes = [...dec.pushChunk(readFileSync(out)), ...dec.flush()];
    expect(fixes).toHaveLength(minutes * 60 * hz);
    expect((fixes.at(-1)?.time ?? 0) - (fixes[0]?.time ?? 0)).toBe(minutes * 60_000 - 1000 / hz);
  });
});
