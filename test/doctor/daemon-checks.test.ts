import { describe, expect, it } from 'vitest';
import { checkReceiverViaDaemon, checkService } from '../../src/doctor/daemon-checks.js';
import type { CheckResult } from '../../src/doctor/check.js';
import type { ReceiverHealthState } from '../../src/gnss/health/receiver-health.js';
import type { ReceiverStatus, StatusSnapshot } from '../../src/status/snapshot.js';

/** The receiver checks doctor makes from the running agent's status when that agent reads gpsd or a serial port. */
const snapshot = { daemon: { pid: 4242 } } as unknown as StatusSnapshot;
const silent = (bytes: number): ReceiverStatus => ({ port: 'gpsd 127.0.0.1:2947', link: 'open', bytes, lines: 0, constellations: [] });

describe('doctor beside the running agent: receiver advice', () => {
  it('a gpsd link gets gpsd advice (gpspipe, DEVICES= in /etc/default/gpsd), never gnss.baudRate', () => {
    for (const bytes of [0, 5000]) {
      const [nmea] = checkReceiverViaDaemon(snapshot, silent(bytes), { baudRate: undefined, replay: false, gpsd: true });
      expect(nmea?.verdict).toBe('FAIL');
      const text = `${nmea?.detail ?? ''} ${nmea?.fix ?? ''}`;
      expect(text).not.toMatch(/baudRate/);
      expect(nmea?.fix).toMatch(/gpspipe -r/);
      expect(nmea?.fix).toMatch(/DEVICES= .*\/etc\/default\/gpsd/);
    }
  });

  it('a serial receiver whose bytes are not NMEA still gets the baud-rate advice', () => {
    const [nmea] = checkReceiverViaDaemon(snapshot, { ...silent(5000), port: '/dev/ttyACM0' }, { baudRate: 9600, replay: false });
    expect(nmea?.fix).toMatch(/gnss\.baudRate \(now 9600\)/);
  });

  it('a replay that gives nothing names gnss.replayFile, never the cable or gnss.baudRate', () => {
    for (const bytes of [0, 5000]) {
      const replay = { ...silent(bytes), port: '/var/lib/missing.nmea', lastError: 'ENOENT' };
      const [nmea] = checkReceiverViaDaemon(snapshot, replay, { baudRate: undefined, replay: true });
      expect(nmea?.verdict).toBe('FAIL');
      expect(nmea?.fix).toMatch(/gnss\.replayFile/);
      expect(nmea?.fix).not.toMatch(/cable|baudRate|check gnss\.path/);
    }
  });
});

describe("doctor beside the running agent: the clock against the agent's GNSS time", () => {
  const timed = (clockOffsetS: number): ReceiverStatus => ({
    ...silent(9000),
    port: '/dev/ttyACM0',
    lines: 300,
    lastSentenceAgeS: 0.4,
    mode: 3,
    clockOffsetS,
  });
  const clockLine = (offsetS: number) => checkReceiverViaDaemon(snapshot, timed(offsetS), { baudRate: 9600, replay: false })[2];

  it('years off reads in days and years, as status and the TLS errors say it, not in seconds', () => {
    expect(clockLine(63_072_002)).toMatchObject({ verdict: 'WARN', detail: 'system clock 730 d (2.0 years) ahead of GNSS time' });
    expect(clockLine(-1_795_564_860)?.detail).toBe('system clock 20782 d (56.9 years) behind GNSS time');
  });

  it('a small offset stays in seconds, to the tenth', () => {
    expect(clockLine(0.4)).toMatchObject({ verdict: 'PASS', detail: 'system clock 0.4 s ahead of GNSS time' });
    expect(clockLine(-63.25)).toMatchObject({ verdict: 'WARN', detail: 'system clock 63.3 s behind GNSS time' });
  });
});

describe("doctor beside the running agent: the receiver's health from its status", () => {
  const healthy: ReceiverHealthState = {
    antenna: 'OK',
    antennaFrom: 'nmea',
    signal: { topMeanDbHz: 42.4, basis: 'used', strong: 9, trend: 'steady' },
    jamming: { state: 'none' },
  };
  const withHealth = (health: ReceiverHealthState | undefined): CheckResult[] => {
    const r: ReceiverStatus = { ...silent(9000), port: '/dev/ttyACM0', lines: 300, lastSentenceAgeS: 0.4, mode: 3, clockOffsetS: 0.1 };
    if (health) r.health = health;
    return checkReceiverViaDaemon(snapshot, r, { baudRate: 9600, replay: false });
  };
  const row = (rows: CheckResult[], name: string) => rows.find((c) => c.name === name);

  it('antenna OK and no jamming pass, with the signal the agent has measured', () => {
    const rows = withHealth(healthy);
    expect(row(rows, 'antenna')).toMatchObject({ verdict: 'PASS', detail: 'the receiver reports the antenna OK (from the running agent)' });
    expect(row(rows, 'jamming')).toMatchObject({
      verdict: 'PASS',
      detail: 'none suspected, C/N0 42 dB-Hz (top 4), 9 satellites above 30 dB-Hz (from the running agent)',
    });
  });

  it('an open or shorted antenna FAILs with what to do; suspected jamming WARNs with where to look', () => {
    expect(row(withHealth({ ...healthy, antenna: 'OPEN' }), 'antenna')).toMatchObject({
      verdict: 'FAIL',
      fix: expect.stringMatching(/cable/),
    });
    expect(row(withHealth({ ...healthy, antenna: 'SHORT' }), 'antenna')).toMatchObject({
      verdict: 'FAIL',
      fix: expect.stringMatching(/replace the antenna/),
    });
    const jammed = row(
      withHealth({ ...healthy, jamming: { state: 'suspected', reason: 'C/N0 fell 18 dB on 8 satellites in 4 s' } }),
      'jamming',
    );
    expect(jammed).toMatchObject({ verdict: 'WARN', fix: expect.stringMatching(/device in the cab/) });
    expect(jammed?.detail).toMatch(/^suspected: C\/N0 fell 18 dB on 8 satellites in 4 s, C\/N0 42 dB-Hz/);
  });

  it('nothing said of the antenna makes no row; no satellite heard makes jamming SKIP; an older agent without health adds neither', () => {
    const quiet = withHealth({ ...healthy, antenna: 'unknown', signal: { basis: 'in view', strong: 0, trend: 'unknown' } });
    expect(row(quiet, 'antenna')).toBeUndefined();
    expect(row(quiet, 'jamming')?.verdict).toBe('SKIP');
    const old = withHealth(undefined);
    expect(old.map((c) => c.name)).toEqual(['NMEA', 'fix', 'clock vs GNSS']);
  });
});

describe('doctor: is the agent running?', () => {
  const base = { snapshot: undefined, askError: undefined, socketPath: '/run/telematics-agent/status.sock' };
  const notRunning = { code: 'DAEMON_NOT_RUNNING', message: 'no agent' };

  it('on a gateway a stopped agent FAILs, with the command that starts it and where to read why it stopped', () => {
    const r = checkService({ ...base, askError: notRunning, gateway: true });
    expect(r.verdict).toBe('FAIL');
    expect(r.detail).toMatch(/the agent is not running: no answer on \/run\/telematics-agent\/status\.sock/);
    expect(r.fix).toMatch(/systemctl start telematics-agent.*journalctl -u telematics-agent/);
  });

  it('off a gateway no running agent is a warning (as status says "daemon not running"), with the command that starts one', () => {
    const r = checkService({ ...base, askError: notRunning, gateway: false, configPath: '/home/me/try/sim-config.json' });
    expect(r.verdict).toBe('WARN');
    expect(r.detail).toMatch(
      /^no agent is running for this configuration: no answer on \/run\/telematics-agent\/status\.sock.*not a gateway/,
    );
    expect(r.fix).toBe('start one: telematics-agent run --config /home/me/try/sim-config.json');
    const spaced = checkService({ ...base, askError: notRunning, gateway: false, configPath: "/tmp/my dir/it's.json" });
    expect(spaced.fix).toBe("start one: telematics-agent run --config '/tmp/my dir/it'\\''s.json'");
  });

  it('a running agent PASSes, a busy one is running, a socket it may not open is a warning', () => {
    expect(checkService({ ...base, snapshot, gateway: true })).toMatchObject({
      verdict: 'PASS',
      detail: 'the agent is running (pid 4242)',
    });
    const busy = checkService({ ...base, askError: { code: 'DAEMON_BUSY', message: 'queue full' }, gateway: true });
    expect(busy.verdict).toBe('PASS');
    const denied = checkService({ ...base, askError: { code: 'DAEMON_SOCKET_DENIED', message: 'EACCES' }, gateway: true });
    expect(denied.verdict).toBe('WARN');
  });
});
