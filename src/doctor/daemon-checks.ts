/**
 * Receiver checks beside the running service: the daemon holds the serial port, so
 * doctor takes the receiver's facts from its status socket, as `location here --source auto` does,
 * instead of opening the port a second time ("Cannot lock port").
 */
import type { ReceiverStatus, StatusSnapshot } from '../status/snapshot.js';
import { printable } from '../terminal/printable.js';
import { formatAge, platformLinkReason } from '../status/health.js';
import { fail, pass, skip, warn, type CheckResult } from './check.js';
import { clockVsGnss } from './gnss-checks.js';
import { antennaCheck, jammingCheck } from './antenna-check.js';

/** A sentence older than this means the receiver has gone quiet. */
const QUIET_S = 10;

export interface DaemonReceiverOptions {
  /** The configured baud rate (a serial receiver), undefined for a replay log. */
  baudRate: number | undefined;
  replay: boolean;
  /** The receiver is read through gpsd (gnss.gpsd): advice names gpsd's side, not a baud rate. */
  gpsd?: boolean;
  maxClockOffsetS?: number;
}

export function checkReceiverViaDaemon(snapshot: StatusSnapshot, r: ReceiverStatus, o: DaemonReceiverOptions): CheckResult[] {
  const who = `the running agent (pid ${snapshot.daemon.pid ?? '?'})`;
  const port = printable(r.port);
  const at = o.baudRate !== undefined ? ` at ${o.baudRate} baud` : '';
  const out: CheckResult[] = [];
  if (r.lastSentenceAgeS !== undefined && r.lastSentenceAgeS <= QUIET_S) {
    out.push(pass('NMEA', `${who} reads ${port}${at}: last sentence ${r.lastSentenceAgeS.toFixed(1)} s ago, ${r.lines ?? 0} lines`));
  } else {
    const since = r.lastSentenceAgeS === undefined ? 'no valid sentence yet' : `no sentence for ${r.lastSentenceAgeS.toFixed(0)} s`;
    const link = `link ${printable(r.link)}${r.lastError ? `: ${printable(r.lastError)}` : ''}`;
    out.push(
      fail(
        'NMEA',
        `${who} has ${since} from ${port}${at} (${link}; ${r.bytes ?? 0} bytes read)`,
        o.gpsd
          ? gpsdAdvice(r.bytes)
          : o.replay
            ? r.bytes
              ? 'gnss.replayFile holds no NMEA sentences: point it at an NMEA log ($GPRMC,... lines)'
              : 'set gnss.replayFile to an NMEA log that exists and the service can read (telematics-agent drive --out FILE writes a synthetic one), or gnss.path to the receiver'
            : r.bytes
              ? `bytes arrive but no valid NMEA: check gnss.baudRate (now ${o.baudRate ?? '-'}) against the receiver`
              : 'check the cable and the receiver power; `telematics-agent status --watch` shows the link live',
      ),
    );
    out.push(skip('fix', 'no NMEA'), skip('clock vs GNSS', 'no NMEA'));
    return out;
  }
  if (r.health) {
    const antenna = antennaCheck(r.health, ' (from the running agent)');
    if (antenna) out.push(antenna);
    out.push(jammingCheck(r.health, ' (from the running agent)'));
  }
  if (r.mode !== undefined && r.mode >= 2)
    out.push(
      pass('fix', `${r.mode}D fix, ${r.satellitesUsed ?? '?'} satellites, HDOP ${r.hdop?.toFixed(1) ?? '?'} (from the running agent)`),
    );
  else out.push(warn('fix', 'no position fix yet', 'give the antenna a clear view of the sky; a cold start can take a few minutes'));
  out.push(clockViaDaemon(r, o));
  return out;
}

function clockViaDaemon(r: ReceiverStatus, o: DaemonReceiverOptions): CheckResult {
  if (o.replay) return skip('clock vs GNSS', 'a replayed log: its times are not now, so no comparison');
  if (r.clockOffsetS === undefined) return skip('clock vs GNSS', 'no GNSS time yet');
  return clockVsGnss(r.clockOffsetS * 1000, o.maxClockOffsetS);
}

/** gpsd owns the receiver: its device and speed are set on gpsd's side, and gpspipe shows what it reads. */
function gpsdAdvice(bytes: number | undefined): string {
  return bytes
    ? "gpsd passes bytes but no valid NMEA: see what gpsd reads with `gpspipe -r -n 20`; check the device in DEVICES= of /etc/default/gpsd (and gnss.gpsdDevice) and that gpsd detects the receiver's speed (`gpsctl`)"
    : 'gpsd sends nothing: check `gpspipe -r -n 5` and `systemctl status gpsd`, and that DEVICES= in /etc/default/gpsd names the receiver (then restart gpsd); check the cable and the receiver power';
}

/**
 * The running agent's own view of the platform link, as `status` judges it: the
 * address checks above ask the platform now, this says how the agent fared since it last had an
 * answer (a failed token refresh while parked, with nothing queued).
 */
export function checkPlatformLinkViaDaemon(snapshot: StatusSnapshot): CheckResult {
  const p = snapshot.platform;
  const who = `the running agent (pid ${snapshot.daemon.pid ?? '?'})`;
  if (!p) return skip('platform link', `${who} does not report it`);
  const reason = platformLinkReason(snapshot);
  if (reason)
    return warn(
      'platform link',
      `${who}: ${reason}`,
      'the agent keeps retrying on its own; the platform address checks here show whether the network and the addresses work now',
    );
  if (p.lastAnswerAgeS !== undefined)
    return pass('platform link', `${who} had an answer from the platform ${formatAge(p.lastAnswerAgeS)} ago`);
  return pass('platform link', `${who} has not needed the platform since it started`);
}

/** Where provision.sh (/etc) and the Debian package (/usr/lib) install the unit: either makes this machine a gateway. */
export const UNIT_FILES = ['/etc/systemd/system/telematics-agent.service', '/usr/lib/systemd/system/telematics-agent.service'];

export interface ServiceFacts {
  /** The running agent's answer, if it gave one. */
  snapshot: StatusSnapshot | undefined;
  /** Why asking failed, when it did: DAEMON_NOT_RUNNING, DAEMON_SOCKET_DENIED, or a busy daemon's error. */
  askError: { code: string; message: string } | undefined;
  socketPath: string;
  /** The unit is installed, or the configuration is the gateway's (/etc/telematics-agent/config.json). */
  gateway: boolean;
  /** The configuration file doctor read, for the command that starts an agent on it off a gateway. */
  configPath?: string;
}

/**
 * Is the agent running? On a gateway a stopped service is a failure: it records nothing. Off a
 * gateway (a developer's --config, no unit installed) it is a warning, as `status` says "daemon not
 * running": a technician who runs doctor first must not read that all is well.
 */
export function checkService(f: ServiceFacts): CheckResult {
  if (f.snapshot) return pass('service', `the agent is running (pid ${f.snapshot.daemon.pid ?? '?'})`);
  const code = f.askError?.code;
  if (code === 'DAEMON_SOCKET_DENIED')
    return warn(
      'service',
      `cannot ask the agent: permission denied on ${f.socketPath}`,
      'run doctor as root or as a member of group telematics-agent to see whether the service runs',
    );
  if (code !== undefined && code !== 'DAEMON_NOT_RUNNING') return pass('service', `the agent is running, but busy: ${f.askError?.message}`);
  if (!f.gateway)
    return warn(
      'service',
      `no agent is running for this configuration: no answer on ${f.socketPath}, so nothing is recorded or delivered (not a gateway: no unit installed)`,
      `start one: telematics-agent run --config ${f.configPath === undefined ? 'FILE' : shellWord(f.configPath)}`,
    );
  return fail(
    'service',
    `the agent is not running: no answer on ${f.socketPath}, so nothing is recorded or delivered`,
    'sudo systemctl start telematics-agent; if it stopped by itself, journalctl -u telematics-agent -n 50 says why',
  );
}

/** A path as one shell word: quoted only when it needs to be. */
function shellWord(s: string): string {
  return /^[\w./,:@%+=-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}
