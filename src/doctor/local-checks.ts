/**
 * Checks of this machine: configuration, password file, serial device, disk. Each is a small
 * function of injected facts, so the table test can set up a temp dir and read the verdict.
 */
import { DATA_DIR_FAULT_WORDS, nearestReadOnly, readOnlyMount } from '../system/data-dir-fault.js';
import { databaseNotAFile } from '../store/database.js';
import { accessSync, constants, statSync, statfsSync, type Stats } from 'node:fs';
import nodePath from 'node:path';
import { loadConfig, type Config } from '../config/load.js';
import { replacedKeyWarnings } from '../config/warnings.js';
import { describeError } from '../errors.js';
import { fail, pass, skip, warn, type CheckResult } from './check.js';

export function checkConfig(path: string | undefined, env: NodeJS.ProcessEnv): { result: CheckResult; config?: Config } {
  try {
    const config = loadConfig({ ...(path !== undefined ? { path } : {}), env });
    const old = oldKeys(config);
    if (old !== undefined) return { result: old, config };
    return { result: pass('configuration', `${config.source} is valid`), config };
  } catch (e) {
    // Every problem, on one line (the renderer wraps it on a terminal).
    const all = describeError(e)
      .split('\n')
      .map((l) => l.trim().replace(/^- /, ''))
      .filter((l) => l !== '')
      .join('; ');
    return { result: fail('configuration', all, 'correct the keys named here (telematics-agent config check lists them)') };
  }
}

/** Keys of an earlier version start the agent, but a technician should hear that they do nothing. */
function oldKeys(config: Config): CheckResult | undefined {
  const old = replacedKeyWarnings(config).map((w) => w.path);
  if (old.length === 0) return undefined;
  // backlogRatePerS is read as the ceiling it became, unless that key is set too (then it wins).
  const rename = config.upload.backlogRatePerS !== undefined && config.upload.backlogRatePerS === config.upload.backlogMaxRatePerS;
  const removed = rename ? old.length - 1 : old.length;
  const steps = [
    ...(rename ? ['rename upload.backlogRatePerS to upload.backlogMaxRatePerS'] : []),
    ...(removed === 0 ? [] : [`remove ${rename ? 'the others' : removed === 1 ? 'it' : 'them'}`]),
  ];
  return warn(
    'configuration',
    `${config.source} is valid, but sets ${old.length === 1 ? 'a key' : `${old.length} keys`} of an earlier version: ${old.join(', ')}`,
    `${steps.join(', ')} (telematics-agent config check says what the agent does now)`,
  );
}

export function checkPasswordFile(config: Config, stat: (f: string) => Stats = statSync): CheckResult {
  const c = config.credentials;
  if (c.passwordSource !== 'passwordFile' || c.passwordFile === undefined) return pass('password', `from ${c.passwordSource}`);
  let st: Stats;
  try {
    st = stat(c.passwordFile);
  } catch {
    return fail('password file', `${c.passwordFile} does not exist`, `write the password into ${c.passwordFile} (mode 0600)`);
  }
  const mode = st.mode & 0o777;
  if ((mode & 0o077) !== 0)
    return fail('password file', `${c.passwordFile} has mode ${mode.toString(8).padStart(4, '0')}`, `chmod 600 ${c.passwordFile}`);
  return pass('password file', `${c.passwordFile} mode ${mode.toString(8).padStart(4, '0')}`);
}

export interface SerialFacts {
  stat(path: string): Stats;
  readable(path: string): boolean;
  /** Groups of the service user, or undefined when the user does not exist on this machine. */
  serviceUserGroups(): { gids: number[]; names: string[] } | undefined;
}

export const SERVICE_USER = 'telematics-agent';

export function checkSerialDevice(config: Config, facts: SerialFacts): CheckResult {
  if (config.gnss.gpsd !== undefined) return skip('serial device', `gpsd owns the receiver (gnss.gpsd ${config.gnss.gpsd})`);
  if (config.gnss.path === undefined) return skip('serial device', `no gnss.path: replaying ${config.gnss.replayFile ?? '?'}`);
  const dev = config.gnss.path;
  let st: Stats;
  try {
    st = facts.stat(dev);
  } catch {
    return fail('serial device', `${dev} does not exist`, 'plug the receiver in, check `ls /dev/ttyACM* /dev/ttyUSB*`, and set gnss.path');
  }
  if (!st.isCharacterDevice())
    return fail('serial device', `${dev} is not a character device`, 'set gnss.path to the receiver (e.g. /dev/ttyACM0)');
  const user = facts.serviceUserGroups();
  if (user) {
    const byGroup = user.gids.includes(st.gid) && (st.mode & 0o040) !== 0;
    const byOther = (st.mode & 0o004) !== 0;
    if (!byGroup && !byOther)
      return fail(
        'serial device',
        `${dev} (gid ${st.gid}, mode ${(st.mode & 0o777).toString(8)}) is not readable by ${SERVICE_USER}`,
        `usermod -aG dialout ${SERVICE_USER} (or the device's group), then restart the service`,
      );
    return pass('serial device', `${dev} readable by ${SERVICE_USER} (groups ${user.names.join(',')})`);
  }
  if (!facts.readable(dev))
    return fail(
      'serial device',
      `${dev} is not readable by this user`,
      'run doctor as root or the service user, or add yourself to group dialout',
    );
  return pass('serial device', `${dev} present and readable (no ${SERVICE_USER} user here)`);
}

export function defaultSerialFacts(readGroupFile: () => string, uidOf: () => { gid: number } | undefined): SerialFacts {
  return {
    stat: (p) => statSync(p),
    readable: (p) => {
      try {
        accessSync(p, constants.R_OK);
        return true;
      } catch {
        return false;
      }
    },
    serviceUserGroups: () => {
      const primary = uidOf();
      if (!primary) return undefined;
      const gids = [primary.gid];
      const names: string[] = [];
      for (const line of readGroupFile().split('\n')) {
        const [name, , gid, members] = line.split(':');
        if (name === undefined || gid === undefined) continue;
        if (Number(gid) === primary.gid || (members ?? '').split(',').includes(SERVICE_USER)) {
          gids.push(Number(gid));
          names.push(name);
        }
      }
      return { gids, names };
    },
  };
}

export function checkDisk(
  dataDir: string,
  minFreeBytes: number,
  statfs: (p: string) => { bavail: number; bsize: number } = statfsSync,
): CheckResult {
  let free: number;
  // Before the first start dataDir does not exist yet: the service creates it (StateDirectory=),
  // so the space that counts is that of the nearest folder that does.
  let where = dataDir;
  let note = '';
  for (;;) {
    try {
      const s = statfs(where);
      free = s.bavail * s.bsize;
      break;
    } catch (e) {
      const parent = nodePath.dirname(where);
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || parent === where)
        return fail('disk space', `cannot stat ${dataDir}`, `create ${dataDir} for the service user (or set dataDir)`);
      where = parent;
      note = ` (${dataDir} will be created at the first start)`;
    }
  }
  const mib = (n: number): string => `${Math.round(n / 2 ** 20)} MiB`;
  const shown = `${where}${note}`;
  if (free < minFreeBytes)
    return fail(
      'disk space',
      `${mib(free)} free in ${shown}, below storage.minFreeBytes (${mib(minFreeBytes)})`,
      'free space on the data partition; the outbox grows into a quarter of what is left, then thins its backlog',
    );
  if (free < 2 * minFreeBytes)
    return warn(
      'disk space',
      `${mib(free)} free in ${shown}`,
      'free space soon: below storage.minFreeBytes the outbox takes at most a quarter of what is left, then thins its backlog',
    );
  return pass('disk space', `${mib(free)} free in ${shown}`);
}

/**
 * A card that takes no writes takes no fix, token or registration: doctor said "all checks passed"
 * beside it. Mounted read-only, made read-only by the kernel after storage errors (emergency_ro,
 * which access(2) does not show), or agent.db taken by a directory: each named with its own fix.
 */
export function checkDataDirWritable(
  dataDir: string,
  readOnly: (dir: string) => 'mounted' | 'kernel' | undefined = readOnlyKind,
): CheckResult {
  const kind = readOnly(dataDir);
  if (kind === 'kernel')
    return fail(
      'data directory',
      `the kernel made the data directory's filesystem read-only after storage errors (emergency_ro): ${dataDir} takes no fixes, tokens or registration`,
      'the card is failing: check `dmesg`, run fsck on it unmounted (a reboot does for the root filesystem), and replace it if it happens again; the agent holds fixes in memory meanwhile',
    );
  if (kind === 'mounted')
    return fail(
      'data directory',
      `${DATA_DIR_FAULT_WORDS['read-only']}: ${dataDir} takes no fixes, tokens or registration`,
      'the kernel remounts a card read-only after I/O errors: check `dmesg`, run fsck, then `mount -o remount,rw` its mount point (or replace the card); the agent resumes writing without a restart',
    );
  const notAFile = databaseNotAFile(dataDir);
  if (notAFile !== undefined) return fail('data directory', `database unusable: ${notAFile.problem}`, notAFile.fix);
  return pass('data directory', `${dataDir} is on a writable filesystem`);
}

/** 'kernel' or 'mounted' when dataDir (or its nearest existing folder) takes no writes. */
function readOnlyKind(dataDir: string): 'mounted' | 'kernel' | undefined {
  const at = nearestReadOnly(dataDir);
  if (at === undefined) return undefined;
  return readOnlyMount(at) ?? 'mounted';
}
