import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { inspect } from 'node:util';
import { parseGpsdAddress } from '../../src/config/gpsd-address.js';
import { describe, expect, it } from 'vitest';
import { loadConfig, maskedConfig, parseConfig } from '../../src/config/load.js';
import { stagingAddress } from '../../src/config/addresses.js';
import { ConfigError } from '../../src/errors.js';
import { replacedKeyWarnings } from '../../src/config/warnings.js';
import { UPLOAD_BACKOFF } from '../../src/upload/retry-decision.js';
import { PLATFORM_TUNING } from '../../src/platform/tuning.js';
import { tempDir } from '../helpers/tmp.js';

type Json = Record<string, unknown>;

function validConfig(): Json {
  return {
    platform: { deviceUrl: 'https://devices.example.com/api/public/v2/' },
    credentials: { username: 'gateway', password: 'pw-from-test' },
    device: { externalSystemId: 'acme', carrierCode: 'ACME' },
    gnss: { path: '/dev/ttyACM0' },
  };
}

function set(obj: Json, keyPath: string, value: unknown): Json {
  const keys = keyPath.split('.');
  let cur: Json = obj;
  for (const k of keys.slice(0, -1)) {
    if (typeof cur[k] !== 'object' || cur[k] === null) cur[k] = {};
    cur = cur[k] as Json;
  }
  const last = keys[keys.length - 1] as string;
  if (value === undefined) delete cur[last];
  else cur[last] = value;
  return obj;
}

function parse(json: unknown, env: NodeJS.ProcessEnv = {}) {
  return parseConfig(json, { source: '/etc/telematics-agent/config.json', env });
}

function issuesOf(f: () => unknown): { path: string; message: string }[] {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return [...(e as ConfigError).issues];
  }
  throw new Error('expected a ConfigError');
}

describe('configuration: valid files', () => {
  it('fills every default and derives production addresses', () => {
    const c = parse(validConfig());
    expect(c.environment).toBe('production');
    expect(c.platform.authUrl).toBe('https://auth-service.services.simacan.com/api/v1');
    expect(c.platform.planningUrl).toBe('https://planning-receive-api.services.simacan.com');
    expect(c.platform.eventsPath).toBe('/otm/api/v5/events');
    expect(c.platform.locationsPath).toBe('/otm/api/v5/locations');
    expect(c.gnss.baudRate).toBe(9600);
    expect(c.dataDir).toBe('/var/lib/telematics-agent');
    expect(c.recording.mode).toBe('path');
    expect(c.upload.eventDetail).toBe('position');
    expect(c.log.level).toBe('info');
    expect(c.device.active).toBe(true);
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.platform)).toBe(true);
  });

  it('derives staging addresses only for URLs not set explicitly', () => {
    const json = set(validConfig(), 'environment', 'staging');
    set(json, 'platform.planningUrl', 'https://planning.example.org');
    const c = parse(json);
    expect(c.platform.authUrl).toBe('https://auth-service-stg.services.simacan.com/api/v1');
    expect(c.platform.planningUrl).toBe('https://planning.example.org');
    expect(stagingAddress('https://planning-receive-api.services.simacan.com')).toBe(
      'https://planning-receive-api-stg.services.simacan.com',
    );
    expect(stagingAddress(stagingAddress('https://a.b.c/api/v1'))).toBe('https://a-stg.b.c/api/v1');
  });

  it('accepts the device paths receivers really have (by-id aliases, pts, the Pi UART alias)', () => {
    for (const p of [
      '/dev/serial/by-id/usb-u-blox_AG_-_www.u-blox.com_u-blox_GNSS_receiver-if00',
      '/dev/pts/3',
      '/dev/serial0',
      '/dev/ttyACM0',
    ])
      expect(parse(set(validConfig(), 'gnss.path', p)).gnss.path).toBe(p);
  });

  it('takes gpsd as the source: host:port, [v6]:port, a host alone, a socket path; and a device of it', () => {
    for (const a of ['127.0.0.1:2947', '[::1]:2947', 'localhost', '/run/gpsd-client.sock']) {
      const c = parse(set(validConfig(), 'gnss', { gpsd: a, gpsdDevice: '/dev/serial/by-id/usb-u-blox-if00' }));
      expect(c.gnss.gpsd).toBe(a);
    }
    expect(parseGpsdAddress('[::1]:2947')).toEqual({ host: '::1', port: 2947 });
    expect(parseGpsdAddress('localhost')).toEqual({ host: 'localhost', port: 2947 });
    expect(parseGpsdAddress('/run/x.sock')).toEqual({ socketPath: '/run/x.sock' });
  });

  it('allows http:// on loopback hosts for the simulator', () => {
    const json = validConfig();
    set(json, 'platform.authUrl', 'http://127.0.0.1:8480/api/v1');
    set(json, 'platform.deviceUrl', 'http://localhost:8480/api/public/v2/');
    set(json, 'platform.planningUrl', 'http://[::1]:8480');
    const c = parse(json);
    expect(c.platform.deviceUrl).toBe('http://localhost:8480/api/public/v2/');
  });

  it('takes the password from TELEMATICS_AGENT_PASSWORD first and never prints it', () => {
    const c = parse(validConfig(), { TELEMATICS_AGENT_PASSWORD: 'from-env-secret' });
    expect(c.credentials.passwordSource).toBe('env');
    expect(c.credentials.password.reveal()).toBe('from-env-secret');
    const shown = JSON.stringify(maskedConfig(c)) + inspect(c, { depth: 10 }) + String(c.credentials.password);
    expect(shown).not.toContain('from-env-secret');
    expect(shown).toContain('[redacted]');
  });

  it('reads the password from the systemd credential directory', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'password'), 'cred-secret\n', { mode: 0o600 });
    const c = parse(set(validConfig(), 'credentials.password', undefined), { CREDENTIALS_DIRECTORY: dir });
    expect(c.credentials.passwordSource).toBe('systemd-credential');
    expect(c.credentials.password.reveal()).toBe('cred-secret');
  });

  it('reads a 0600 password file relative to the configuration file', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'password'), 'file-secret\n', { mode: 0o600 });
    const json = set(validConfig(), 'credentials.password', undefined);
    set(json, 'credentials.passwordFile', 'password');
    writeFileSync(path.join(dir, 'config.json'), JSON.stringify(json));
    const c = loadConfig({ path: path.join(dir, 'config.json'), env: {} });
    expect(c.credentials.password.reveal()).toBe('file-secret');
    expect(c.credentials.passwordFile).toBe(path.join(dir, 'password'));
  });

  it('accepts a password file that is not installed yet and fails with the key when it is needed', () => {
    const json = set(validConfig(), 'credentials.password', undefined);
    set(json, 'credentials.passwordFile', '/nonexistent/password');
    const c = parse(json);
    expect(() => c.credentials.password.reveal()).toThrow(/credentials\.passwordFile: cannot read \/nonexistent\/password: no such file/);
  });

  it('resolves the path from --config, then TELEMATICS_AGENT_CONFIG', () => {
    const dir = tempDir();
    const file = path.join(dir, 'c.json');
    writeFileSync(file, JSON.stringify(validConfig()));
    expect(loadConfig({ env: { TELEMATICS_AGENT_CONFIG: file } }).source).toBe(file);
    expect(() => loadConfig({ env: {} })).toThrow(/\/etc\/telematics-agent\/config\.json/);
  });
});

interface BadCase {
  name: string;
  mutate: (json: Json) => unknown;
  env?: NodeJS.ProcessEnv;
  /** The key path the message must name. */
  key: string;
  message: RegExp;
}

const BAD: BadCase[] = [
  {
    name: 'missing credentials.username',
    mutate: (j) => set(j, 'credentials.username', undefined),
    key: 'credentials.username',
    message: /required/,
  },
  {
    name: 'missing device.externalSystemId',
    mutate: (j) => set(j, 'device.externalSystemId', undefined),
    key: 'device.externalSystemId',
    message: /required/,
  },
  {
    name: 'missing device.carrierCode',
    mutate: (j) => set(j, 'device.carrierCode', undefined),
    key: 'device.carrierCode',
    message: /required/,
  },
  {
    name: 'missing platform.deviceUrl',
    mutate: (j) => set(j, 'platform.deviceUrl', undefined),
    key: 'platform.deviceUrl',
    message: /no published address/,
  },
  { name: 'wrong type for gnss.baudRate', mutate: (j) => set(j, 'gnss.baudRate', '9600'), key: 'gnss.baudRate', message: /number/ },
  { name: 'unsupported gnss.baudRate', mutate: (j) => set(j, 'gnss.baudRate', 9601), key: 'gnss.baudRate', message: /one of 4800, 9600/ },
  { name: 'unknown top-level key', mutate: (j) => set(j, 'dataDri', '/tmp'), key: 'dataDri', message: /unknown key/ },
  {
    name: 'unknown nested key (typo)',
    mutate: (j) => set(j, 'platform.authURL', 'https://x.example.com/api/v1'),
    key: 'platform.authURL',
    message: /unknown key/,
  },
  { name: 'bad URL', mutate: (j) => set(j, 'platform.planningUrl', 'not a url'), key: 'platform.planningUrl', message: /absolute URL/ },
  {
    name: 'http:// to a remote host',
    mutate: (j) => set(j, 'platform.planningUrl', 'http://planning.example.com'),
    key: 'platform.planningUrl',
    message: /https:\/\/.*loopback/,
  },
  {
    name: 'authUrl without /api/v1',
    mutate: (j) => set(j, 'platform.authUrl', 'https://auth.example.com/'),
    key: 'platform.authUrl',
    message: /\/api\/v1/,
  },
  {
    name: 'deviceUrl without /api/public/v2/',
    mutate: (j) => set(j, 'platform.deviceUrl', 'https://devices.example.com/api/v1'),
    key: 'platform.deviceUrl',
    message: /\/api\/public\/v2\//,
  },
  {
    name: 'both password forms',
    mutate: (j) => set(j, 'credentials.passwordFile', '/etc/telematics-agent/password'),
    key: 'credentials.password',
    message: /not both/,
  },
  {
    name: 'no password at all',
    mutate: (j) => set(j, 'credentials.password', undefined),
    key: 'credentials.passwordFile',
    message: /no password/,
  },
  { name: 'unknown environment', mutate: (j) => set(j, 'environment', 'prod'), key: 'environment', message: /production|staging/ },
  {
    name: 'unknown recording.mode',
    mutate: (j) => set(j, 'recording.mode', 'sometimes'),
    key: 'recording.mode',
    message: /path|adaptive|all/,
  },
  {
    name: 'unknown upload.eventDetail',
    mutate: (j) => set(j, 'upload.eventDetail', 'minimal'),
    key: 'upload.eventDetail',
    message: /position|full/,
  },
  {
    name: 'recording.pathToleranceM of 0',
    mutate: (j) => set(j, 'recording.pathToleranceM', 0),
    key: 'recording.pathToleranceM',
    message: />=\s*1|at least 1|too small/i,
  },
  { name: 'neither gnss.path nor gnss.replayFile', mutate: (j) => set(j, 'gnss', {}), key: 'gnss.path', message: /gnss\.replayFile/ },
  {
    name: 'gnss.path and gnss.replayFile together (a leftover replay must not win silently)',
    mutate: (j) => set(j, 'gnss.replayFile', '/var/log/old-drive.nmea'),
    key: 'gnss.replayFile',
    message: /gnss\.path and gnss\.replayFile are both set; set exactly one GNSS source/,
  },
  {
    name: 'gnss.path with a newline (would add directives to the systemd drop-in)',
    mutate: (j) => set(j, 'gnss.path', '/dev/ttyACM0\nExecStartPre=/bin/sh'),
    key: 'gnss.path',
    message: /device path under \/dev/,
  },
  {
    name: 'gnss.gpsd beside gnss.path: one rule names both keys',
    mutate: (j) => set(j, 'gnss.gpsd', '127.0.0.1:2947'),
    key: 'gnss.gpsd',
    message: /gnss\.path and gnss\.gpsd are both set; set exactly one GNSS source \(gnss\.path, gnss\.replayFile, gnss\.gpsd\)/,
  },
  {
    name: 'gnss.gpsd beside gnss.replayFile',
    mutate: (j) => set(set(j, 'gnss', { replayFile: '/x.nmea' }), 'gnss.gpsd', 'localhost'),
    key: 'gnss.gpsd',
    message: /gnss\.replayFile and gnss\.gpsd are both set/,
  },
  {
    name: 'gnss.gpsd not an address',
    mutate: (j) => set(j, 'gnss', { gpsd: 'localhost:2947; rm -rf' }),
    key: 'gnss.gpsd',
    message: /host:port/,
  },
  {
    name: 'gnss.gpsd port out of range',
    mutate: (j) => set(j, 'gnss', { gpsd: '127.0.0.1:99999' }),
    key: 'gnss.gpsd',
    message: /host:port/,
  },
  {
    name: 'gnss.gpsdDevice without gnss.gpsd',
    mutate: (j) => set(j, 'gnss.gpsdDevice', '/dev/ttyACM0'),
    key: 'gnss.gpsdDevice',
    message: /set gnss\.gpsd too/,
  },
  { name: 'gnss.path outside /dev', mutate: (j) => set(j, 'gnss.path', '/tmp/tty0'), key: 'gnss.path', message: /under \/dev/ },
  { name: 'gnss.path with a space', mutate: (j) => set(j, 'gnss.path', '/dev/tty ACM0'), key: 'gnss.path', message: /under \/dev/ },
  { name: 'gnss.path climbing out of /dev', mutate: (j) => set(j, 'gnss.path', '/dev/../etc/shadow'), key: 'gnss.path', message: /\.\./ },
  {
    name: 'negative upload.concurrency',
    mutate: (j) => set(j, 'upload.concurrency', -1),
    key: 'upload.concurrency',
    message: />=|at least|too small/i,
  },
  { name: 'bad log.level', mutate: (j) => set(j, 'log.level', 'verbose'), key: 'log.level', message: /info/ },
  {
    name: 'hysteresis inverted',
    mutate: (j) => set(set(j, 'recording.stoppedSpeedKmh', 8), 'recording.movingSpeedKmh', 4),
    key: 'recording.movingSpeedKmh',
    message: /hysteresis/,
  },
  {
    name: 'device.attributes not an object',
    mutate: (j) => set(j, 'device.attributes', 'van'),
    key: 'device.attributes',
    message: /object|record/i,
  },
  { name: 'empty username', mutate: (j) => set(j, 'credentials.username', ''), key: 'credentials.username', message: /empty/ },
  { name: 'root is not an object', mutate: () => [], key: '', message: /object/ },
];

describe('configuration: every mistake names the key', () => {
  it.each(BAD)('$name', ({ mutate, env, key, message }) => {
    const json = validConfig();
    const result = mutate(json);
    const issues = issuesOf(() => parse(result ?? json, env));
    const hit = issues.find((i) => i.path.split(', ').includes(key));
    expect(hit, `issues were: ${JSON.stringify(issues)}`).toBeDefined();
    expect(hit?.message).toMatch(message);
  });

  it('reports all problems at once', () => {
    const json = validConfig();
    set(json, 'credentials.username', undefined);
    set(json, 'gnss.baudRate', 'fast');
    set(json, 'bogus', 1);
    const paths = issuesOf(() => parse(json)).map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['credentials.username', 'gnss.baudRate', 'bogus']));
  });

  it('refuses a password file readable by group or others, naming the file and the chmod', () => {
    const dir = tempDir();
    const pw = path.join(dir, 'password');
    writeFileSync(pw, 'secret-in-file');
    chmodSync(pw, 0o644);
    const json = set(validConfig(), 'credentials.password', undefined);
    set(json, 'credentials.passwordFile', pw);
    const [issue] = issuesOf(() => parse(json));
    expect(issue?.path).toBe('credentials.passwordFile');
    expect(issue?.message).toContain(`chmod 600 ${pw}`);
    expect(issue?.message).toContain('0644');
    expect(issue?.message).not.toContain('secret-in-file');
  });

  it('names the file when it is not JSON', () => {
    const dir = tempDir();
    const file = path.join(dir, 'bad.json');
    writeFileSync(file, '{ "environment": "production", }');
    expect(() => loadConfig({ path: file, env: {} })).toThrow(new RegExp(`${file} is not valid JSON`));
  });

  it('never echoes an inline password in an error', () => {
    const json = set(validConfig(), 'credentials.password', 'inline-secret-value');
    set(json, 'credentials.passwordFile', '/x');
    let message = '';
    try {
      parse(json);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('credentials.password');
    expect(message).not.toContain('inline-secret-value');
  });
});

describe('placeholders (<...> values sim leaves to fill in)', () => {
  it('names gnss.* and dataDir placeholders', () => {
    const json = set(set(validConfig(), 'gnss', { replayFile: '<NMEA log to replay>' }), 'dataDir', '<directory>');
    expect(issuesOf(() => parse(json))).toEqual(
      expect.arrayContaining([
        { path: 'gnss.replayFile', message: 'still the placeholder "<NMEA log to replay>": replace it with a real value' },
        { path: 'dataDir', message: 'still the placeholder "<directory>": replace it with a real value' },
      ]),
    );
  });

  it('an ordinary value written <...> elsewhere is accepted', () => {
    const json = set(set(validConfig(), 'device.attributes', { note: '<none>' }), 'device.driverName', '<unknown>');
    const config = parse(json);
    expect(config.device.attributes).toEqual({ note: '<none>' });
    expect(config.device.driverName).toBe('<unknown>');
  });

  it('a password written <...> is accepted, and never echoed when another key is wrong', () => {
    expect(parse(set(validConfig(), 'credentials.password', '<S3cret!pw>')).credentials.password.reveal()).toBe('<S3cret!pw>');
    const json = set(set(validConfig(), 'credentials.password', '<S3cret!pw>'), 'dataDir', '<directory>');
    const issues = issuesOf(() => parse(json));
    expect(issues.map((i) => i.path)).toEqual(['dataDir']);
    expect(JSON.stringify(issues)).not.toContain('S3cret');
  });
});

describe('upload.backlogRatePerS (replaced by upload.backlogMaxRatePerS)', () => {
  it('a file written for the previous version starts: the old key is read as the ceiling, with a warning naming its replacement', () => {
    const config = parse(set(validConfig(), 'upload.backlogRatePerS', 0.1));
    expect(config.upload.backlogMaxRatePerS).toBe(0.1);
    const [w, ...rest] = replacedKeyWarnings(config);
    expect(rest).toEqual([]);
    expect(w?.path).toBe('upload.backlogRatePerS');
    expect(w?.message).toContain('replaced by upload.backlogMaxRatePerS');
    expect(w?.message).toContain('0.1 is read as upload.backlogMaxRatePerS');
  });

  it('the new key wins over the old one, and without either the drain has no ceiling and no warning', () => {
    const both = parse(set(set(validConfig(), 'upload.backlogRatePerS', 0.1), 'upload.backlogMaxRatePerS', 5));
    expect(both.upload.backlogMaxRatePerS).toBe(5);
    expect(replacedKeyWarnings(both)[0]?.message).toContain('upload.backlogMaxRatePerS (5) is set and wins');
    const plain = parse(validConfig());
    expect(plain.upload.backlogMaxRatePerS).toBeUndefined();
    expect(replacedKeyWarnings(plain)).toEqual([]);
  });
});

describe('platform.tokenRefreshMarginS (now a constant)', () => {
  it('a file that still sets it starts, and is told the key is no longer read', () => {
    const config = parse(set(validConfig(), 'platform.tokenRefreshMarginS', 300));
    const [w, ...rest] = replacedKeyWarnings(config);
    expect(rest).toEqual([]);
    expect(w?.path).toBe('platform.tokenRefreshMarginS');
    expect(w?.message).toMatch(/^no longer read: the token is refreshed 120 s before its lifetime ends/);
    expect(replacedKeyWarnings(parse(validConfig()))).toEqual([]);
  });
});

describe('platform.registrationConfigRetryS (now a constant)', () => {
  it('a file that still sets it starts, and is told the key is no longer read', () => {
    const config = parse(set(validConfig(), 'platform.registrationConfigRetryS', 600));
    const [w, ...rest] = replacedKeyWarnings(config);
    expect(rest).toEqual([]);
    expect(w?.path).toBe('platform.registrationConfigRetryS');
    expect(w?.message).toMatch(
      /^no longer read: a registration refused as a configuration problem is tried again after half to all of an hour/,
    );
  });
});

describe('retry bounds of an earlier version (now constants, shortened only through AgentOptions.tuning)', () => {
  const RETIRED = [
    'upload.minBackoffMs',
    'upload.maxBackoffMs',
    'platform.passwordRetryMinS',
    'platform.passwordRetryMaxS',
    'platform.tokenServiceRetryMinS',
    'platform.tokenServiceRetryMaxS',
    'platform.registrationRetryMinS',
    'platform.registrationRetryMaxS',
    'platform.pingIntervalS',
  ];

  it.each(RETIRED)('a file that still sets %s starts, and is told what the agent does now', (key) => {
    // Any number an earlier version took, even one outside its old bounds: never a refusal.
    const config = parse(set(validConfig(), key, 0.5));
    const warnings = replacedKeyWarnings(config);
    expect(warnings.map((w) => w.path)).toEqual([key]);
    expect(warnings[0]?.message).toMatch(/^no longer read: .+; remove the key$/);
  });

  it('the warnings give the constants the agent uses', () => {
    const all = validConfig();
    for (const key of RETIRED) set(all, key, 1);
    const text = (key: string): string => replacedKeyWarnings(parse(all)).find((w) => w.path === key)?.message ?? '';
    const b = UPLOAD_BACKOFF;
    expect(text('upload.minBackoffMs')).toContain(`after ${b.minBackoffMs / 1000} s, doubling to ${b.maxBackoffMs / 60_000} min`);
    const p = PLATFORM_TUNING;
    expect(text('platform.passwordRetryMinS')).toContain(`after ${p.passwordRetryMinS / 60} min, doubling to an hour`);
    expect(p.passwordRetryMaxS).toBe(3600);
    expect(text('platform.tokenServiceRetryMaxS')).toContain(
      `after ${p.tokenServiceRetryMinS} s, doubling to ${p.tokenServiceRetryMaxS / 60} min`,
    );
    expect(text('platform.registrationRetryMinS')).toContain(
      `after ${p.registrationRetryMinS} s, doubling to ${p.registrationRetryMaxS / 60} min`,
    );
    expect(p.pingIntervalS).toBe(0);
    expect(text('platform.pingIntervalS')).toContain('sends no HTTP/2 PING');
  });

  it("config check's effective configuration leaves them out: nothing reads them, and a copy of it starts without warnings", () => {
    const all = set(validConfig(), 'upload.backlogRatePerS', 3);
    for (const key of [...RETIRED, 'platform.tokenRefreshMarginS', 'platform.registrationConfigRetryS']) set(all, key, 60);
    expect(replacedKeyWarnings(parse(all))).toHaveLength(12);
    const shown = maskedConfig(parse(all)) as { platform: Json; upload: Json };
    expect(JSON.stringify(shown)).not.toMatch(
      /RetryM|BackoffMs|pingIntervalS|tokenRefreshMarginS|registrationConfigRetryS|backlogRatePerS/,
    );
    expect(shown.upload.backlogMaxRatePerS).toBe(3);
    // With the real password in place of the mask, which the schema refuses.
    expect(replacedKeyWarnings(parse(set(shown, 'credentials.password', 'pw-from-test')))).toEqual([]);
  });

  it('an unknown key is never offered one of them, and a value of the wrong type is told to remove the key', () => {
    const typo = issuesOf(() => parse(set(validConfig(), 'platform.pingIntervallS', 45)))[0];
    expect(typo?.path).toBe('platform.pingIntervallS');
    expect(typo?.message).not.toMatch(/did you mean/);
    expect(typo?.message).toContain('allowed here: authUrl,');
    expect(typo?.message).not.toMatch(/pingIntervalS|RetryM/);
    expect(issuesOf(() => parse(set(validConfig(), 'upload.minBackoffMs', '1s')))).toEqual([
      {
        path: 'upload.minBackoffMs',
        message: 'is no longer read (a key of an earlier version, still accepted as a number): remove the key',
      },
    ]);
  });
});
