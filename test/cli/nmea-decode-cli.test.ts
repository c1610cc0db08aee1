import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checksum } from '../../src/sim/receiver/index.js';
import { haveCommand } from '../field/tools.js';
import { CLI } from '../helpers/paths.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';

/** `nmea decode` says what it read and why nothing came out, and names the file. */
const GGA = '$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47';
const RMC = '$GPRMC,123519,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W*6A';
const nmea = (body: string): string => `$${body}*${checksum(body)}`;
const GSV = nmea('GPGSV,1,1,01,05,45,120,40');
const GGA2 = nmea('GPGGA,123520,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,');

describe('nmea decode through the built CLI', () => {
  it('a log with fixes: JSON on stdout, the counts on stderr', async () => {
    const RMC2 = nmea('GPRMC,123520,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W');
    const r = await runCli(['nmea', 'decode', '-'], { stdin: `${RMC}\r\n${GGA}\r\n${RMC2}\r\n${GGA2}\r\n` });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(2);
    expect(r.stderr).toBe('nmea decode: read 4 lines (4 NMEA sentences used), 2 fixes\n');
  });

  it.each([
    ['', 'read 0 lines (0 NMEA sentences used), 0 fixes: the input was empty'],
    ['hello\n\u00b5\u00fe binary\n', 'read 2 lines (0 NMEA sentences used), 0 fixes: no NMEA in the input (noStart 2)'],
    [`${GGA}\r\n${GGA2}\r\n`, 'read 2 lines (2 NMEA sentences used), 0 fixes: no RMC or ZDA sentence, so no date'],
    [`${GSV}\r\n`, 'no sentence carries a time'],
  ])('nothing came out of %j: says why on stderr', async (input, why) => {
    const r = await runCli(['nmea', 'decode'], { stdin: input });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(why);
  });

  it('a missing file or a directory: named, exit 2', async () => {
    const dir = tempDir();
    const missing = path.join(dir, 'no-such.nmea');
    const r = await runCli(['nmea', 'decode', missing]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`telematics-agent: nmea decode: cannot read ${missing}: no such file\n`);
    mkdirSync(path.join(dir, 'logs'));
    const d = await runCli(['nmea', 'decode', path.join(dir, 'logs')]);
    expect(d.code).toBe(2);
    expect(d.stderr).toBe(`telematics-agent: nmea decode: ${path.join(dir, 'logs')} is a directory, not an NMEA log\n`);
    const unreadable = path.join(dir, 'secret.nmea');
    writeFileSync(unreadable, `${RMC}\r\n`, { mode: 0o000 });
    if (process.getuid?.() !== 0) {
      const u = await runCli(['nmea', 'decode', unreadable]);
      expect(u.code).toBe(2);
      expect(u.stderr).toContain(`cannot read ${unreadable}: permission denied`);
    }
  });

  it('--help gives the output units', async () => {
    const r = await runCli(['nmea', 'decode', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/speed +metres per second \(m\/s\)/);
    expect(r.stdout).toMatch(/track +degrees true/);
    expect(r.stdout).toMatch(/altMSL +metres above mean sea level/);
  });

  it.skipIf(!haveCommand('script'))('with a terminal on stdin and no file, says it is reading standard input', () => {
    // script(1) gives the command a real pseudo-terminal; Ctrl-D on it ends the input.
    const r = spawnSync('script', ['-q', '-e', '-c', `${process.execPath} ${CLI} nmea decode`, '/dev/null'], {
      input: '\u0004',
      encoding: 'utf8',
      timeout: 30_000,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR },
    });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('reading NMEA from standard input (end with Ctrl-D');
  });
});
