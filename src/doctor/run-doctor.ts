/**
 * The real seams for `doctor`: the serial port (or replay file), DNS, the platform over the
 * shared HTTP dispatcher (TLS verified), a password grant through the shared TokenClient (the
 * token is dropped at once and never printed), and the stored registration.
 */
import { systemClock } from '../system/clock.js';
import { type AgentError, describeError, isAgentError } from '../errors.js';
import { lookup } from 'node:dns/promises';
import { existsSync, readFileSync } from 'node:fs';

import { DEFAULT_CONFIG_PATH, type Config } from '../config/load.js';
import { platformDispatcher, platformHttp } from '../platform/build.js';
import type { PlatformTransport } from '../platform/transport/dispatcher.js';
import { SecretRedactor } from '../platform/auth/secret-redactor.js';
import { TokenClient } from '../platform/auth/token-client.js';
import { deviceUuidOf } from '../platform/device/body.js';
import { DeviceClient } from '../platform/device/client.js';
import type { TokenPair } from '../platform/auth/token-pair.js';
import { requestSnapshot } from '../status/status-client.js';
import type { StatusSnapshot } from '../status/snapshot.js';
import { statusSocketPath } from '../socket/path.js';
import { DatabaseReader } from '../store/database-reader.js';
import { type CheckResult, fail, warn } from './check.js';
import { STATUS_ANSWER_MS } from '../status/status-source.js';
import { formatAge } from '../status/health.js';
import { checkPlatformLinkViaDaemon, checkReceiverViaDaemon, checkService, UNIT_FILES } from './daemon-checks.js';
import { checkReceiver, type NmeaReader } from './gnss-checks.js';
import { probeGpsd, type GpsdProbe } from './gpsd-checks.js';
import { parseGpsdAddress } from '../config/gpsd-address.js';
import { defaultSerialPortFactory, type SerialPortFactory } from '../gnss/sources/serial-source.js';
import { silentLogger } from '../log.js';
import {
  checkConfig,
  checkDataDirWritable,
  checkDisk,
  checkPasswordFile,
  checkSerialDevice,
  defaultSerialFacts,
  SERVICE_USER,
} from './local-checks.js';
import { checkIgnition } from './ignition-check.js';
import { CannotAsk, CLOCK_FIX, checkAddresses, checkCredentials, checkRegistration, type PlatformProbes } from './platform-checks.js';

/** The hardware seams doctor reads through (the serial port: the source's factory unless a test gives another). */
export interface DoctorSeams {
  portFactory?: SerialPortFactory;
  /** Whether this machine is a gateway (default: the unit installed, or the gateway's configuration path). */
  gateway?: (config: Config) => boolean;
}

/** A gateway: provision.sh installed the unit, or the configuration is the one the unit reads. */
function isGateway(config: Config): boolean {
  return UNIT_FILES.some((f) => existsSync(f)) || config.source === DEFAULT_CONFIG_PATH;
}

export interface DoctorOptions {
  /** Make a password grant even when the agent's token shows the credentials working (`--test-password`). */
  testPassword?: boolean;
}

export async function runDoctor(
  configPath: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  seams: DoctorSeams = {},
  options: DoctorOptions = {},
): Promise<CheckResult[]> {
  const { result, config } = checkConfig(configPath, env);
  const results = [result];
  if (!config) return results;
  results.push(checkPasswordFile(config));
  results.push(
    checkSerialDevice(
      config,
      defaultSerialFacts(
        () => safeRead('/etc/group'),
        () => serviceUser(),
      ),
    ),
  );
  // Beside the running service the daemon holds the port: it is asked, the port is not opened.
  // As long as `status` waits (a flooded daemon lets a client in within its queue's 2 s); a
  // daemon that is running but did not answer is not taken for absent, so its port stays shut.
  let daemonBusy: AgentError | undefined;
  let askError: AgentError | undefined;
  const socketPath = statusSocketPath(config);
  const daemon = await requestSnapshot(socketPath, STATUS_ANSWER_MS).catch((e: unknown) => {
    if (isAgentError(e)) askError = e;
    if (isAgentError(e) && e.code !== 'DAEMON_NOT_RUNNING' && e.code !== 'DAEMON_SOCKET_DENIED') daemonBusy = e;
    return undefined;
  });
  const gateway = (seams.gateway ?? isGateway)(config);
  results.push(checkService({ snapshot: daemon, askError, socketPath, gateway, configPath: config.source }));
  const replay = config.gnss.replayFile !== undefined;
  // System clock minus GNSS time, measured below: a TLS date failure is then named as the clock's.
  let clockOffsetMs = !replay && daemon?.receiver?.clockOffsetS !== undefined ? daemon.receiver.clockOffsetS * 1000 : undefined;
  // gpsd shares the receiver: doctor asks gpsd itself, with or without the service running.
  const gpsd = config.gnss.gpsd !== undefined ? await gpsdProbe(config) : undefined;
  if (gpsd) results.push(gpsd.result);
  if (daemon?.receiver) {
    results.push(
      ...checkReceiverViaDaemon(daemon, daemon.receiver, {
        baudRate: replay || config.gnss.gpsd !== undefined ? undefined : config.gnss.baudRate,
        replay,
        gpsd: config.gnss.gpsd !== undefined,
      }),
    );
  } else if (daemonBusy) {
    results.push(
      warn(
        'NMEA',
        `the agent is running but did not answer: ${daemonBusy.message}; its receiver was not opened beside it`,
        'run doctor again; if it persists, look for local clients holding the status socket (ss -xp)',
      ),
    );
  } else {
    results.push(
      ...(await checkReceiver({
        read: gpsd ? async () => gpsd.bytes : nmeaReader(config, seams.portFactory ?? defaultSerialPortFactory),
        configuredBaud: config.gnss.path ? config.gnss.baudRate : undefined,
        listenMs: config.gnss.path ? 5000 : 1000,
        clock: systemClock,
        replay,
        sourceKey: replay ? 'gnss.replayFile' : config.gnss.gpsd !== undefined ? 'gnss.gpsd' : 'gnss.path',
        onClockOffset: (ms) => (clockOffsetMs = ms),
      })),
    );
  }
  // The daemon's factories: its deadline, connections, TLS trust and protocol (platform.*); closed
  // at the end so that its idle connections and pings do not hold the command open.
  const dispatcher = platformDispatcher(config);
  try {
    const probes = platformProbes(config, daemon, dispatcher, clockOffsetMs);
    const addresses = await checkAddresses(
      { authUrl: config.platform.authUrl, deviceUrl: config.platform.deviceUrl, planningUrl: config.platform.planningUrl },
      probes,
    );
    results.push(...addresses);
    blameTheClock(results, addresses);
    results.push(
      await checkCredentials(probes, addresses, {
        ...options,
        ...(config.credentials.password.origin !== undefined ? { passwordOrigin: config.credentials.password.origin } : {}),
      }),
    );
    results.push(await checkRegistration(probes));
    if (daemon) results.push(checkPlatformLinkViaDaemon(daemon));
  } finally {
    await dispatcher.close().catch(() => undefined);
  }
  results.push(checkDisk(config.dataDir, config.storage.minFreeBytes));
  results.push(checkDataDirWritable(config.dataDir));
  results.push(await checkIgnition(config));
  return results;
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function serviceUser(): { gid: number } | undefined {
  for (const line of safeRead('/etc/passwd').split('\n')) {
    const f = line.split(':');
    if (f[0] === SERVICE_USER && f[3] !== undefined) return { gid: Number(f[3]) };
  }
  return undefined;
}

async function gpsdProbe(config: Config): Promise<GpsdProbe | undefined> {
  const address = parseGpsdAddress(config.gnss.gpsd ?? '');
  if (address === undefined) return undefined;
  return probeGpsd({
    address,
    ...(config.gnss.gpsdDevice ? { device: config.gnss.gpsdDevice } : {}),
    listenMs: 3000,
    logger: silentLogger(),
  });
}

/** The receiver's bytes through the serial source's port seam (serial-source.ts), at the baud rate asked. */
function nmeaReader(config: Config, portFactory: SerialPortFactory): NmeaReader {
  if (!config.gnss.path) {
    const file = config.gnss.replayFile ?? '';
    return async () => readFileSync(file).subarray(0, 64 * 1024);
  }
  const path = config.gnss.path;
  return async (baud, ms) => {
    const port = portFactory({ path, baudRate: baud ?? config.gnss.baudRate });
    await new Promise<void>((resolve, reject) => port.open((e) => (e ? reject(e) : resolve())));
    const chunks: Buffer[] = [];
    port.on('data', (c: Buffer) => chunks.push(c));
    await new Promise((r) => setTimeout(r, ms));
    await new Promise<void>((resolve) => port.close(() => resolve()));
    return Buffer.concat(chunks);
  };
}

/**
 * TLS refused the platform's certificate by a clock that GNSS time shows wrong: the clock check is
 * then a failure, not a warning (the platform cannot be reached until the clock is set).
 */
function blameTheClock(results: CheckResult[], addresses: readonly CheckResult[]): void {
  if (!addresses.some((r) => r.verdict === 'FAIL' && r.fix?.startsWith(CLOCK_FIX))) return;
  const i = results.findIndex((r) => r.name === 'clock vs GNSS' && r.verdict === 'WARN');
  if (i < 0) return;
  results[i] = fail(
    'clock vs GNSS',
    `${results[i]!.detail}: TLS refuses the platform's certificate by this clock`,
    'set the system clock (it is what the platform checks below fail on), then enable time sync (systemd-timesyncd or chrony)',
  );
}

function platformProbes(
  config: Config,
  daemon: StatusSnapshot | undefined,
  dispatcher: PlatformTransport,
  clockOffsetMs: number | undefined,
): PlatformProbes {
  // Doctor prints what the token service said: an echo of the password in it is redacted.
  const redactor = new SecretRedactor();
  // TLS date errors then say which is wrong, the clock (and by how much) or the certificate.
  const clockFacts = () => ({ wallMs: systemClock.wallMs(), ...(clockOffsetMs !== undefined ? { offsetMs: clockOffsetMs } : {}) });
  const http = platformHttp(config, dispatcher, redactor, undefined, clockFacts);
  // The credentials check's token, kept only to ask the device service (never stored or printed).
  let pair: TokenPair | undefined;
  // Why there is no token to ask the device service with (doctor-checks registration says so).
  let noToken = 'the password grant was not tried';
  return {
    workingToken: () => {
      const why = workingTokenEvidence(config, daemon);
      if (why !== undefined)
        noToken = `no token of doctor's own: the credentials work (${why}), so no password grant was made; doctor --test-password makes one and asks the platform`;
      return why;
    },
    lookup: async (host) => (await lookup(host)).address,
    probe: (url) => http.probe(url, 'address check'),
    grant: async () => {
      const outcome = await new TokenClient({ http, authUrl: config.platform.authUrl, clock: systemClock, redactor }).password(
        config.credentials.username,
        config.credentials.password,
      );
      if (outcome.kind === 'pair') {
        pair = outcome.pair;
        return 'accepted';
      }
      if (outcome.kind === 'rejected') {
        noToken = 'no token: the token service rejected the credentials';
        return 'rejected';
      }
      noToken = `no token: the token service did not answer the password grant (${describeError(outcome.error)})`;
      throw outcome.error;
    },
    registeredDevice: async () => {
      // The running agent knows; else what it stored; else the platform, which has the last word.
      const live = daemon?.registration.deviceUUID;
      if (live !== undefined) return { deviceUUID: live, from: 'the running agent' };
      let stored: { externalDeviceId?: string; deviceUUID?: string } | undefined;
      try {
        const store = DatabaseReader.open(config.dataDir);
        try {
          stored = { ...store?.identity(), ...store?.registration() };
        } finally {
          store?.close();
        }
      } catch {
        // unreadable to this user: ask the platform
      }
      if (stored?.deviceUUID !== undefined) return { deviceUUID: stored.deviceUUID, from: 'the database' };
      const externalDeviceId = config.device.externalDeviceId ?? daemon?.registration.externalDeviceId ?? stored?.externalDeviceId;
      // Without an id or a token the platform is not asked, so nothing is known (not "unregistered").
      if (externalDeviceId === undefined)
        throw new CannotAsk(
          'no external device id yet: device.externalDeviceId is not set and the agent has not stored one (it does on its first start)',
        );
      if (pair === undefined) throw new CannotAsk(noToken);
      const token = pair.accessToken;
      const client = new DeviceClient({
        requester: { send: (req) => http.send({ ...req, headers: { authorization: `Bearer ${token}` }, what: 'device retrieval' }) },
        deviceUrl: config.platform.deviceUrl,
        clock: systemClock,
      });
      const found = await client.byExternalId(config.device.externalSystemId, externalDeviceId);
      return found ? { deviceUUID: deviceUuidOf(found) ?? '(none in the answer)', from: 'the platform' } : undefined;
    },
  };
}

/**
 * What shows the credentials working, without a password grant: the running agent's valid token,
 * else a stored pair whose access token has not run out (wall clock: doctor has no other). Doctor
 * never refreshes: that would rotate the refresh token the agent holds.
 */
function workingTokenEvidence(config: Config, daemon: StatusSnapshot | undefined): string | undefined {
  const t = daemon?.token;
  if (t?.state === 'valid')
    return `the running agent (pid ${daemon?.daemon.pid ?? '?'}) holds a valid token${t.ageS === undefined ? '' : `, ${formatAge(t.ageS)} old`}`;
  if (daemon) return undefined;
  let stored: { obtainedAt: number; expiresInS: number } | undefined;
  try {
    const store = DatabaseReader.open(config.dataDir);
    try {
      stored = store?.tokenAge();
    } finally {
      store?.close();
    }
  } catch {
    return undefined; // unreadable to this user: the password is tried
  }
  if (!stored) return undefined;
  const ageS = (Date.now() - stored.obtainedAt) / 1000;
  return ageS >= 0 && ageS < stored.expiresInS ? `the stored token is valid, ${formatAge(ageS)} old` : undefined;
}
