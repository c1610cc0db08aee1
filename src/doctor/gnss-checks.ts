/**
 * Receiver checks: NMEA arriving within 5 s (garbage: which baud rate decodes it), a fix, and
 * the system clock against GNSS time. The byte reader is injected: a serial port at a given baud
 * rate in the CLI, a buffer in the tests.
 */
import type { Clock } from '../system/clock.js';
import { describeClockOffset } from '../system/clock-offset.js';
import { createDecoder } from '../gnss/decoder.js';
import { ReceiverHealth } from '../gnss/health/receiver-health.js';
import { antennaCheck } from './antenna-check.js';
import type { Fix } from '../fix/fix.js';
import { fail, pass, skip, warn, type CheckResult } from './check.js';

/** Bytes from the receiver for up to `ms` at `baud` (undefined: the configured rate or a file). */
export type NmeaReader = (baud: number | undefined, ms: number) => Promise<Buffer>;

export const PROBE_BAUDS = [4800, 9600, 38400, 115200, 19200, 57600, 230400, 460800];

interface Decoded {
  valid: number;
  bytes: number;
  fixes: Fix[];
  health: ReceiverHealth;
}

function decode(bytes: Buffer): Decoded {
  const health = new ReceiverHealth();
  const dec = createDecoder({ onText: (t) => health.text(t) });
  const fixes = [...dec.pushChunk(bytes), ...dec.flush()];
  const valid = Object.values(dec.counters.sentences.decoded).reduce((a, b) => a + (b ?? 0), 0);
  return { valid, bytes: bytes.length, fixes, health };
}

export interface GnssCheckOptions {
  read: NmeaReader;
  configuredBaud: number | undefined;
  /** How long to listen (5 s on a real receiver). */
  listenMs: number;
  /** Its wall clock is compared with the fix's GNSS time. */
  clock: Pick<Clock, 'wallMs'>;
  /** Largest tolerated system clock offset, s. */
  maxClockOffsetS?: number;
  /** A replayed log: its GNSS times are from another day, so the clock comparison is no finding. */
  replay?: boolean;
  /**
   * The configuration key that names where the NMEA comes from, so that each fix line names the
   * key that is actually set (default gnss.path).
   */
  sourceKey?: GnssSourceKey;
  /** Told the measured offset (system clock minus GNSS time, ms): the platform checks blame the clock by it. */
  onClockOffset?: (offsetMs: number) => void;
}

export type GnssSourceKey = 'gnss.path' | 'gnss.replayFile' | 'gnss.gpsd';

/** What to check when nothing (readable) comes from the source, per configuration key. */
const SOURCE_ADVICE: Record<GnssSourceKey, { unreadable: string; silent: string; noNmea: string }> = {
  'gnss.path': {
    unreadable: 'check gnss.path and that the receiver is plugged in',
    silent: 'check the cable and the receiver power; some receivers need NMEA output enabled',
    noNmea: 'the device may not be a GNSS receiver, or it speaks a binary protocol only; enable NMEA output',
  },
  'gnss.replayFile': {
    unreadable:
      'set gnss.replayFile to an NMEA log that exists and the service can read (telematics-agent drive --out FILE writes a synthetic one), or gnss.path to the receiver',
    silent: 'gnss.replayFile is empty: point it at an NMEA log (telematics-agent drive --out FILE writes one)',
    noNmea: 'gnss.replayFile holds no NMEA sentences: point it at an NMEA log ($GPRMC,... lines)',
  },
  'gnss.gpsd': {
    unreadable: 'check gnss.gpsd and that gpsd runs (systemctl status gpsd.socket gpsd)',
    silent: 'gpsd passed on no NMEA: check DEVICES= in /etc/default/gpsd and the receiver (gpspipe -r -n 5)',
    noNmea: 'gpsd passed on no NMEA sentences: the receiver may speak a binary protocol only; enable NMEA output (gpsctl -n)',
  },
};

export async function checkReceiver(o: GnssCheckOptions): Promise<CheckResult[]> {
  const advice = SOURCE_ADVICE[o.sourceKey ?? 'gnss.path'];
  let sample: Decoded;
  try {
    sample = decode(await o.read(o.configuredBaud, o.listenMs));
  } catch (e) {
    return [
      fail(
        'NMEA',
        `cannot read ${o.sourceKey === 'gnss.replayFile' ? 'the replay file' : 'the receiver'}: ${(e as Error).message}`,
        o.sourceKey !== 'gnss.replayFile' && /lock|busy/i.test((e as Error).message)
          ? 'another program holds the port; if it is the service, run doctor as root or in its group so that it asks the service'
          : advice.unreadable,
      ),
      skip('fix', 'no NMEA'),
      skip('clock vs GNSS', 'no NMEA'),
    ];
  }
  const seconds = (o.listenMs / 1000).toFixed(0);
  if (sample.valid === 0) {
    if (sample.bytes === 0)
      return [
        fail('NMEA', o.sourceKey === 'gnss.replayFile' ? 'the replay file is empty' : `nothing arrived in ${seconds} s`, advice.silent),
        skip('fix', 'no NMEA'),
        skip('clock vs GNSS', 'no NMEA'),
      ];
    if (o.configuredBaud !== undefined) {
      for (const baud of PROBE_BAUDS.filter((b) => b !== o.configuredBaud)) {
        const probe = decode(await o.read(baud, Math.min(o.listenMs, 2000)).catch(() => Buffer.alloc(0)));
        if (probe.valid > 0)
          return [
            fail(
              'NMEA',
              `${sample.bytes} bytes of garbage at ${o.configuredBaud} baud; valid NMEA at ${baud}`,
              `set gnss.baudRate to ${baud}`,
            ),
            skip('fix', 'wrong baud rate'),
            skip('clock vs GNSS', 'wrong baud rate'),
          ];
      }
    }
    return [
      fail('NMEA', `${sample.bytes} bytes but no valid NMEA sentence`, advice.noNmea),
      skip('fix', 'no NMEA'),
      skip('clock vs GNSS', 'no NMEA'),
    ];
  }
  const out: CheckResult[] = [pass('NMEA', `${sample.valid} valid sentences in ${seconds} s`)];
  const antenna = antennaCheck(sample.health.state());
  if (antenna) out.push(antenna);
  const fix = [...sample.fixes].reverse().find((f) => f.mode >= 2);
  if (!fix) {
    out.push(
      warn('fix', `no position fix within ${seconds} s`, 'give the antenna a clear view of the sky; a cold start can take a few minutes'),
    );
    const timed = sample.fixes.at(-1);
    out.push(timed ? clock(timed, o) : skip('clock vs GNSS', 'no GNSS time yet'));
    return out;
  }
  out.push(pass('fix', `${fix.mode}D fix, ${fix.satellitesUsed ?? '?'} satellites, HDOP ${fix.hdop?.toFixed(1) ?? '?'}`));
  out.push(clock(fix, o));
  return out;
}

function clock(fix: Fix, o: GnssCheckOptions): CheckResult {
  if (o.replay) return skip('clock vs GNSS', 'a replayed log: its times are not now, so no comparison');
  const offsetMs = o.clock.wallMs() - fix.time;
  o.onClockOffset?.(offsetMs);
  return clockVsGnss(offsetMs, o.maxClockOffsetS);
}

/**
 * The clock-vs-GNSS verdict, measured here or by the running agent: "system clock 730 d (2.0 years)
 * ahead of GNSS time", sized as status and the TLS errors size it; seconds only for small offsets.
 */
export function clockVsGnss(offsetMs: number, maxClockOffsetS = 5): CheckResult {
  const text = `system clock ${describeClockOffset(offsetMs, true)} GNSS time`;
  // Fix times never come from the host clock, so an offset does not corrupt data; it breaks TLS
  // certificate checks and log correlation, hence a warning, not a failure.
  if (Math.abs(offsetMs) > maxClockOffsetS * 1000)
    return warn('clock vs GNSS', text, 'enable time sync (systemd-timesyncd or chrony); TLS fails when the clock is far off');
  return pass('clock vs GNSS', text);
}
