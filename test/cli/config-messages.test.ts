import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_DEFAULTS } from '../../src/config/defaults.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';

/** `config check` warnings, JSON syntax errors a person can find, ids safe in URLs. */

const BASE = {
  platform: { deviceUrl: 'https://d.example.com/api/public/v2/' },
  credentials: { username: 'u', password: 'inline-Secret-9' },
  device: { externalSystemId: 'sys', carrierCode: 'C1' },
  // A device node every machine has, so that only the warning a test is about is printed.
  gnss: { path: '/dev/null' },
};

function write(dir: string, name: string, content: unknown, mode = 0o600): string {
  const file = path.join(dir, name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2), { mode });
  return file;
}

describe('config check warnings (exit 0)', () => {
  it('a passwordFile that does not exist', async () => {
    const dir = tempDir();
    const pw = path.join(dir, 'password');
    const file = write(dir, 'config.json', { ...BASE, credentials: { username: 'u', passwordFile: pw } });
    const r = await runCli(['config', 'check', '--config', file]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`warning: credentials.passwordFile: ${pw} does not exist: the agent cannot get a token until it does`);
    expect(r.stderr).toContain(`configuration ${file} is valid (1 warning)`);
    writeFileSync(pw, 'secret\n', { mode: 0o600 });
    const fixed = await runCli(['config', 'check', '--config', file]);
    expect(fixed.stderr).toBe(`configuration ${file} is valid\n`);
  });

  it('an inline password in a file that group or others can read, never printing it', async () => {
    const dir = tempDir();
    const file = write(dir, 'config.json', BASE, 0o640);
    const r = await runCli(['config', 'check', '--config', file]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      `warning: credentials.password: the password is inline in ${file}, which group or others can read (mode 0640); run chmod 600 ${file}`,
    );
    expect(r.stdout + r.stderr).not.toContain('inline-Secret-9');
    const quiet = await runCli(['config', 'check', '--quiet', '--config', file]);
    expect(quiet).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const privateFile = write(dir, 'private.json', BASE, 0o600);
    const ok = await runCli(['config', 'check', '--config', privateFile]);
    expect(ok.stderr).toBe(
      `credentials.password is printed as "[redacted]", which config check refuses: the printout is not a working configuration (${privateFile} is)\nconfiguration ${privateFile} is valid\n`,
    );
  });

  it('retry bounds of an earlier version: the file is valid, each key named with what the agent does now', async () => {
    const dir = tempDir();
    const file = write(dir, 'config.json', {
      ...BASE,
      platform: { ...BASE.platform, tokenServiceRetryMinS: 1, pingIntervalS: 45 },
      upload: { minBackoffMs: 100, maxBackoffMs: 1000 },
    });
    const r = await runCli(['config', 'check', '--config', file]);
    expect(r.code).toBe(0);
    const warnings = r.stderr.split('\n').filter((l) => l.startsWith('warning: '));
    expect(warnings.map((l) => l.split(':')[1]?.trim())).toEqual([
      'upload.minBackoffMs',
      'upload.maxBackoffMs',
      'platform.tokenServiceRetryMinS',
      'platform.pingIntervalS',
    ]);
    expect(r.stderr).toContain(
      'warning: upload.minBackoffMs: no longer read: an upload retries after 1 s, doubling to 5 min (jittered, never before Retry-After); remove the key',
    );
    expect(r.stderr).toContain(`configuration ${file} is valid (4 warnings)`);
  });
});

describe('config check prints a configuration that reads back as valid, but for an inline password', () => {
  it('a password file that is not there is shown as that file, never as a masked password; source and passwordSource are not printed', async () => {
    const dir = tempDir();
    const pw = path.join(dir, 'password');
    const file = write(dir, 'config.json', { ...BASE, credentials: { username: 'u', passwordFile: pw } });
    const r = await runCli(['config', 'check', '--config', file]);
    expect(r.code, r.stderr).toBe(0);
    const printed = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(printed.credentials).toEqual({ username: 'u', passwordFile: pw });
    expect(printed).not.toHaveProperty('source');
    const again = write(dir, 'printed.json', r.stdout);
    const back = await runCli(['config', 'check', '--config', again]);
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toEqual(printed);
  });

  it('an inline password is printed masked, never in clear, and that printout fed back is refused naming the key and the fix', async () => {
    const dir = tempDir();
    const file = write(dir, 'config.json', BASE);
    const r = await runCli(['config', 'check', '--config', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).credentials).toEqual({ username: 'u', password: '[redacted]' });
    expect(r.stdout + r.stderr).not.toContain('inline-Secret-9');
    expect(r.stderr).toContain(
      `credentials.password is printed as "[redacted]", which config check refuses: the printout is not a working configuration (${file} is)`,
    );
    // Saved as the configuration it would log in with the mask: refused, even with the real password in the environment.
    const printed = write(dir, 'printed.json', r.stdout);
    for (const env of [{}, { TELEMATICS_AGENT_PASSWORD: 'inline-Secret-9' }]) {
      const back = await runCli(['config', 'check', '--config', printed], { env });
      expect(back.code, back.stderr).toBe(2);
      expect(back.stderr).toContain(
        'credentials.password: is "[redacted]", the mask config check prints in place of the password: put the real password here, or better in a file (mode 0600) named by credentials.passwordFile',
      );
    }
  });
});

describe('a gnss.path that does not exist', () => {
  it('config check warns, naming the key and what to do; exit 0', async () => {
    const dir = tempDir();
    const file = write(dir, 'config.json', { ...BASE, gnss: { path: '/dev/ttyNOSUCH9' } });
    const r = await runCli(['config', 'check', '--config', file]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      'warning: gnss.path: /dev/ttyNOSUCH9 does not exist on this machine: the agent keeps trying to open it and records nothing until it appears',
    );
    expect(r.stderr).toContain(`configuration ${file} is valid (1 warning)`);
  });
});

describe('a gnss.replayFile that is not there', () => {
  it('config check warns, naming the key; doctor fails NMEA with a fix line that names gnss.replayFile', async () => {
    const dir = tempDir();
    const replay = path.join(dir, 'drive.nmea');
    // Nothing listens on port 9 of the loopback: the platform checks fail at once, offline.
    const nowhere = 'https://127.0.0.1:9';
    const config = {
      ...BASE,
      platform: { authUrl: `${nowhere}/api/v1`, deviceUrl: `${nowhere}/api/public/v2/`, planningUrl: nowhere },
      gnss: { replayFile: replay },
      dataDir: path.join(dir, 'data'),
    };
    const file = write(dir, 'config.json', config);
    const r = await runCli(['config', 'check', '--config', file]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      `warning: gnss.replayFile: ${replay} does not exist: the agent reads no positions until it does; write an NMEA log there (telematics-agent drive --out ${replay} makes a synthetic one), or set gnss.path to the receiver instead`,
    );
    expect(r.stderr).toContain(`configuration ${file} is valid (1 warning)`);

    const doctor = await runCli(['doctor', '--config', file]);
    expect(doctor.stdout).toMatch(/^FAIL\s+NMEA\s+cannot read the replay file: ENOENT/m);
    expect(doctor.stdout).toContain('fix: set gnss.replayFile to an NMEA log that exists');
    expect(doctor.stdout).not.toContain('check gnss.path');

    writeFileSync(replay, '');
    const empty = await runCli(['doctor', '--config', file]);
    expect(empty.stdout).toMatch(/^FAIL\s+NMEA\s+the replay file is empty/m);
    expect(empty.stdout).toContain('fix: gnss.replayFile is empty');

    const drive = await runCli(['drive', '--out', replay, '--minutes', '1']);
    expect(drive.code, drive.stderr).toBe(0);
    const fixed = await runCli(['config', 'check', '--config', file]);
    expect(fixed.stderr).not.toContain('gnss.replayFile');
  });
});

describe('a wrong type or value is explained with an example', () => {
  it('names what is expected, quotes what was written, and gives the line to write', async () => {
    const dir = tempDir();
    const file = write(dir, 'config.json', {
      ...BASE,
      environment: 'stage',
      credentials: { username: 'u', password: 987654 },
      device: { ...BASE.device, active: 'yes' },
      gnss: { path: '/dev/ttyACM0', baudRate: '9600' },
      recording: { mode: 'fast' },
      upload: { concurrency: 0 },
      storage: { commitMaxFixes: 2.5 },
    });
    const r = await runCli(['config', 'check', '--config', file]);
    expect(r.code).toBe(2);
    const lines = r.stderr.split('\n');
    expect(lines).toContain(
      '  - environment: must be one of "production", "staging" (got the string "stage"; did you mean "staging"?), e.g. "environment": "staging"',
    );
    expect(lines).toContain('  - device.active: must be true or false (without quotes), not the string "yes", e.g. "active": true');
    expect(lines).toContain('  - gnss.baudRate: must be a number, not the string "9600", e.g. "baudRate": 9600');
    expect(lines).toContain('  - recording.mode: must be one of "path", "adaptive", "all" (got the string "fast"), e.g. "mode": "path"');
    // The example is the schema's default, whatever it is tuned to.
    expect(lines).toContain(
      `  - upload.concurrency: must be at least 1, not the number 0, e.g. "concurrency": ${CONFIG_DEFAULTS.upload.concurrency}`,
    );
    expect(lines).toContain('  - storage.commitMaxFixes: must be a whole number, not the number 2.5, e.g. "commitMaxFixes": 100');
    // A password of the wrong type is still a password: its value is not printed.
    expect(lines).toContain('  - credentials.password: must be a string in double quotes, not a number (not shown)');
    expect(r.stderr).not.toContain('987654');
    expect(r.stderr).not.toMatch(/Invalid input|Invalid option|Too small|received string/);
  });

  it('a top-level "gps" is taken for "gnss", without a second error about the gnss source it hides', async () => {
    const dir = tempDir();
    const { gnss, ...rest } = BASE;
    const file = write(dir, 'config.json', { ...rest, gps: gnss });
    const r = await runCli(['config', 'check', '--config', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('  - gps: unknown key (gps: did you mean gnss?); allowed here: environment, platform,');
    expect(r.stderr).not.toContain('gnss.path');
    expect(r.stderr.trim().split('\n')).toHaveLength(2);
    // With both present the gnss section's own problems are reported as usual.
    const both = write(dir, 'both.json', { ...rest, gps: gnss, gnss: {} });
    const r2 = await runCli(['config', 'check', '--config', both]);
    expect(r2.stderr).toContain('gnss.path: set exactly one GNSS source');
    expect(r2.stderr).toContain('gps: unknown key');
  });
});

describe('config check on a file that is not JSON', () => {
  it.each([
    [
      'a comment, as JSONC writes it',
      '{\n  "environment": "staging",   // production | staging\n}\n',
      'a comment at line 2, column 31: the configuration is plain JSON, without comments',
    ],
    [
      'a trailing comma',
      '{\n  "environment": "staging",\n}\n',
      'a comma before the closing bracket at line 3, column 1: JSON allows no trailing comma',
    ],
    [
      'an unquoted key',
      '{\n  environment: "staging"\n}\n',
      'unexpected "environment" at line 2, column 3: keys and strings need double quotes',
    ],
    ['a cut file', '{\n  "environment": "staging"\n', 'the file ends early at line 3, column 1'],
  ])('%s: line and column, exit 2', async (_name, text, message) => {
    const file = write(tempDir(), 'config.json', text);
    const r = await runCli(['config', 'check', '--config', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file} is not valid JSON: ${message}`);
  });
});

describe('ids that go into platform URLs', () => {
  it.each([
    ['externalSystemId', '..'],
    ['externalDeviceId', '.'],
    ['licensePlate', ' .. '],
  ])('device.%s %j is refused', async (key, value) => {
    const file = write(tempDir(), 'config.json', { ...BASE, device: { ...BASE.device, [key]: value } });
    const r = await runCli(['config', 'check', '--config', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`device.${key}: must not be "." or "..": the id goes into a platform URL path`);
  });

  it('dots inside an id are fine', async () => {
    const file = write(tempDir(), 'config.json', {
      ...BASE,
      device: { ...BASE.device, externalSystemId: 'acme.fleet', externalDeviceId: 'v1.2' },
    });
    expect((await runCli(['config', 'check', '--quiet', '--config', file])).code).toBe(0);
  });
});
