/**
 * Where `status` gets its snapshot: the daemon's socket (within a second), else the database.
 */
import { systemClock, type Clock } from '../system/clock.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, resolveConfigPath, type Config } from '../config/load.js';
import { schemaDefaults } from '../config/schema.js';
import { AgentError, ConfigError, isAgentError } from '../errors.js';
import { requestSnapshot } from './status-client.js';
import { databaseSnapshot } from './database-snapshot.js';
import type { StatusSnapshot } from './snapshot.js';
import { runDir, statusSocketPath } from '../socket/path.js';

/**
 * How long `status` keeps asking a busy daemon before it reads the database instead. A daemon
 * answers in milliseconds; other local clients flooding its socket can make it refuse or queue
 * the technician's connection for a while, and "not running" is then the wrong answer.
 */
export const STATUS_ANSWER_MS = 3000;

export interface StatusTarget {
  socketPath: string;
  dataDir: string;
  minFreeBytes?: number;
  /** device.externalDeviceId, when configured (the database does not record that source). */
  configuredDeviceId?: string;
  /** Set when the configuration did not validate: status still works from what it could read. */
  configProblem?: string;
  /** The configuration file this user may not read: only the service's socket can still answer. */
  unreadableConfig?: string;
  /** motion.enabled false: false; else whether an ignition input is wired (for the stored motion state). */
  motion?: { ignitionWired: boolean } | false;
}

/**
 * The socket and data directory from the configuration. A configuration that fails validation
 * (say, a missing password file) must not stop a technician from seeing status, so the two keys
 * are then taken from the raw JSON and the problem is reported alongside.
 */
export function statusTarget(configPath: string | undefined, env: NodeJS.ProcessEnv = process.env): StatusTarget {
  let config: Config;
  try {
    config = loadConfig({ ...(configPath !== undefined ? { path: configPath } : {}), env });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    const file = resolveConfigPath(configPath, env);
    let raw: { dataDir?: unknown; status?: { socketPath?: unknown }; storage?: { minFreeBytes?: unknown } };
    try {
      raw = JSON.parse(readFileSync(file, 'utf8')) as typeof raw;
    } catch (readError) {
      if ((readError as NodeJS.ErrnoException).code !== 'EACCES') throw e;
      return { dataDir: schemaDefaults().dataDir, socketPath: path.join(runDir(env), 'status.sock'), unreadableConfig: file };
    }
    const dataDir = path.resolve(path.dirname(file), typeof raw.dataDir === 'string' ? raw.dataDir : schemaDefaults().dataDir);
    const socketPath = typeof raw.status?.socketPath === 'string' ? raw.status.socketPath : undefined;
    // status needs no password: a member of the service's group reads the configuration (0640)
    // but not the root-only password file, and that is no problem of the configuration.
    const onlyPassword = e.issues.every((i) => i.path.startsWith('credentials.password'));
    return {
      dataDir,
      socketPath: statusSocketPath({ dataDir, status: socketPath !== undefined ? { socketPath } : {} }, runDir(env)),
      ...(onlyPassword ? {} : { configProblem: `configuration ${file} is invalid (run: telematics-agent config check)` }),
    };
  }
  return {
    dataDir: config.dataDir,
    socketPath: statusSocketPath(config, runDir(env)),
    minFreeBytes: config.storage.minFreeBytes,
    ...(config.device.externalDeviceId !== undefined ? { configuredDeviceId: config.device.externalDeviceId } : {}),
    motion: config.motion.enabled ? { ignitionWired: config.ignition !== undefined } : false,
  };
}

export async function fetchSnapshot(target: StatusTarget, clock: Pick<Clock, 'wallMs'> = systemClock): Promise<StatusSnapshot> {
  if (target.unreadableConfig !== undefined) {
    try {
      return await requestSnapshot(target.socketPath, STATUS_ANSWER_MS);
    } catch (e) {
      throw unreadableConfigError(e, target.unreadableConfig, target.socketPath);
    }
  }
  let snapshot: StatusSnapshot;
  try {
    snapshot = await requestSnapshot(target.socketPath, STATUS_ANSWER_MS);
  } catch (e) {
    if (!isAgentError(e) || e.errorClass === 'internal') throw e;
    snapshot = databaseSnapshot({
      dataDir: target.dataDir,
      wallMs: clock.wallMs(),
      ...(target.minFreeBytes !== undefined ? { minFreeBytes: target.minFreeBytes } : {}),
      ...(target.configuredDeviceId !== undefined ? { configuredDeviceId: target.configuredDeviceId } : {}),
      ...(target.motion !== undefined ? { motion: target.motion } : {}),
    });
    if (e.code !== 'DAEMON_NOT_RUNNING') (snapshot.notes ??= []).unshift(e.message);
  }
  if (target.configProblem) (snapshot.notes ??= []).unshift(target.configProblem);
  return snapshot;
}

/**
 * The configuration is unreadable, so only the daemon's socket could answer, and it did not. Only
 * a permission refusal on the socket means "this user may read neither"; a stopped, busy or silent
 * daemon is said as such (sudo or joining the group would not help there).
 */
function unreadableConfigError(e: unknown, config: string, socketPath: string): unknown {
  if (!isAgentError(e)) return e;
  const sudo = 'run `sudo telematics-agent status` to see its database';
  switch (e.code) {
    case 'DAEMON_SOCKET_DENIED':
      return new AgentError(
        'STATUS_ACCESS_DENIED',
        `this user can read neither ${config} nor ${socketPath}: run \`sudo telematics-agent status\`, or join the service's group (sudo usermod -aG telematics-agent $USER, then log in again)`,
        { class: 'config', cause: e },
      );
    case 'DAEMON_NOT_RUNNING':
      return new AgentError(
        e.code,
        `the agent is not running (no daemon listens on ${socketPath}), and this user cannot read ${config}: ${sudo}`,
        {
          class: e.errorClass,
          cause: e,
        },
      );
    case 'TOO_MANY_CLIENTS':
      return e; // "the daemon is busy: ... try again"
    case 'DAEMON_NOT_ANSWERING':
      return new AgentError(e.code, `the agent is running but ${e.message} (busy or stuck), and this user cannot read ${config}: ${sudo}`, {
        class: e.errorClass,
        cause: e,
      });
    default:
      return new AgentError(e.code, `${e.message}, and this user cannot read ${config}: ${sudo}`, { class: e.errorClass, cause: e });
  }
}
