import { existsSync, readFileSync, statSync } from 'node:fs';
import type { ConfigIssue } from '../errors.js';
import type { Config } from './load.js';

/**
 * What `config check` warns about in a valid configuration (exit 0): facts of this machine that
 * will bite later, not mistakes in the file. A password file that is not there yet fails at the
 * first password grant; an inline password in a file that group or others can read has leaked
 * to them already; a receiver or a replay file that is not there gives the agent no positions at
 * all (it runs, and says so only in its log and status).
 */
export function configWarnings(config: Config): ConfigIssue[] {
  const warnings: ConfigIssue[] = [...replacedKeyWarnings(config)];
  const replay = config.gnss.replayFile;
  if (replay !== undefined) {
    const problem = !existsSync(replay) ? 'does not exist' : statSync(replay).isFile() ? undefined : 'is not a file';
    if (problem !== undefined)
      warnings.push({
        path: 'gnss.replayFile',
        message: `${replay} ${problem}: the agent reads no positions until it does; write an NMEA log there (telematics-agent drive --out ${replay} makes a synthetic one), or set gnss.path to the receiver instead`,
      });
  }
  const device = config.gnss.path;
  if (device !== undefined && !existsSync(device))
    warnings.push({
      path: 'gnss.path',
      message: `${device} does not exist on this machine: the agent keeps trying to open it and records nothing until it appears; plug the receiver in, or name it by its stable link (ls -l /dev/serial/by-id/)`,
    });
  const c = config.credentials;
  if (c.passwordSource === 'passwordFile' && c.passwordFile !== undefined && !existsSync(c.passwordFile))
    warnings.push({
      path: 'credentials.passwordFile',
      message: `${c.passwordFile} does not exist: the agent cannot get a token until it does; write the password into it and chmod 600 ${c.passwordFile}`,
    });
  if (hasInlinePassword(config.source)) {
    const mode = statSync(config.source).mode & 0o777;
    if ((mode & 0o077) !== 0)
      warnings.push({
        path: 'credentials.password',
        message: `the password is inline in ${config.source}, which group or others can read (mode ${mode.toString(8).padStart(4, '0')}); run chmod 600 ${config.source}, or move the password to credentials.passwordFile (mode 0600)`,
      });
  }
  return warnings;
}

function hasInlinePassword(file: string): boolean {
  try {
    const raw = JSON.parse(readFileSync(file, 'utf8')) as { credentials?: { password?: unknown } };
    return typeof raw.credentials?.password === 'string';
  } catch {
    return false;
  }
}

/** Retry bounds of an earlier version, now constants (upload/retry-decision.ts, platform/tuning.ts), and what the agent does now. */
const RETIRED_WAITS: [section: 'upload' | 'platform', key: string, now: string][] = [
  ['upload', 'minBackoffMs', 'an upload retries after 1 s, doubling to 5 min (jittered, never before Retry-After)'],
  ['upload', 'maxBackoffMs', 'an upload retries after 1 s, doubling to 5 min (jittered, never before Retry-After)'],
  [
    'platform',
    'passwordRetryMinS',
    'rejected credentials are tried again after 2 min, doubling to an hour, and within seconds once the password is corrected',
  ],
  [
    'platform',
    'passwordRetryMaxS',
    'rejected credentials are tried again after 2 min, doubling to an hour, and within seconds once the password is corrected',
  ],
  ['platform', 'tokenServiceRetryMinS', 'a failing token service is asked again after 2 s, doubling to 5 min (never before Retry-After)'],
  ['platform', 'tokenServiceRetryMaxS', 'a failing token service is asked again after 2 s, doubling to 5 min (never before Retry-After)'],
  ['platform', 'registrationRetryMinS', 'a registration failing transiently is tried again after 5 s, doubling to 10 min (jittered)'],
  ['platform', 'registrationRetryMaxS', 'a registration failing transiently is tried again after 5 s, doubling to 10 min (jittered)'],
  [
    'platform',
    'pingIntervalS',
    'the agent sends no HTTP/2 PING; an idle connection closes and the next request reconnects, resuming the TLS session (fewer bytes than pings)',
  ],
];

/**
 * Keys of an earlier version that still work but have a replacement: `config check` lists them and
 * the daemon logs them at start, so a configuration written for the previous version still starts.
 */
export function replacedKeyWarnings(config: Pick<Config, 'upload' | 'platform'>): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  // Keys no installer has a reason to set, now constants beside their measurement: a file that
  // still sets one starts, and is told the value is no longer read.
  if (config.platform.tokenRefreshMarginS !== undefined)
    out.push({
      path: 'platform.tokenRefreshMarginS',
      message: `no longer read: the token is refreshed 120 s before its lifetime ends (at most a tenth of it), a constant measured with a fleet; remove the key`,
    });
  if (config.platform.registrationConfigRetryS !== undefined)
    out.push({
      path: 'platform.registrationConfigRetryS',
      message: `no longer read: a registration refused as a configuration problem is tried again after half to all of an hour (telematics-agent register asks at once); remove the key`,
    });
  for (const [section, key, now] of RETIRED_WAITS)
    if ((config[section] as Record<string, unknown>)[key] !== undefined)
      out.push({ path: `${section}.${key}`, message: `no longer read: ${now}; remove the key` });
  const old = config.upload.backlogRatePerS;
  if (old !== undefined) {
    const ceiling = config.upload.backlogMaxRatePerS;
    out.push({
      path: 'upload.backlogRatePerS',
      message:
        `replaced by upload.backlogMaxRatePerS: the backlog now drains as fast as the platform allows and yields when it pushes back; ` +
        (ceiling === old
          ? `${old} is read as upload.backlogMaxRatePerS, a ceiling over it${old === 0 ? ' (0: none)' : ''}. Rename the key, or remove it to let the drain adapt`
          : `upload.backlogMaxRatePerS (${ceiling}) is set and wins; remove upload.backlogRatePerS`),
    });
  }
  return out;
}
