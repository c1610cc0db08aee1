/**
 * The real seams for `doctor`: the serial port (or replay file), DNS, the platform over the
 * shared HTTP dispatcher (TLS verified), a password grant through the shared TokenClient (the
 * token is dropped at once and never printed), and the stored registration.
 */
import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';

import type { Config } from '../config/load.js';
import { createPlatformDispatcher } from '../platform/dispatcher.js';
import { PlatformHttp } from '../platform/http.js';
import { SecretRedactor } from '../platform/secret-redactor.js';
import { TokenClient } from '../platform/token-client.js';
import { ReadOnlyStore } from '../store/read-only-store.js';
import type { CheckResult } from './check.js';
import { checkReceiver, type NmeaReader } from './gnss-checks.js';
import { checkConfig, checkDisk, checkPasswordFile, checkSerialDevice, defaultSerialFacts, SERVICE_USER } from './local-checks.js';
import { checkAddresses, checkCredentials, checkRegistration, type PlatformProbes } from './platform-checks.js';

export async function runDoctor(configPath: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<CheckResult[]> {
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
  results.push(
    ...(await checkReceiver({
      read: nmeaReader(config),
      configuredBaud: config.gnss.path ? config.gnss.baudRate : undefined,
      listenMs: config.gnss.path ? 5000 : 1000,
      wallMs: Date.now,
    })),
  );
  const probes = platformProbes(config);
  results.push(
    ...(await checkAddresses(
      { authUrl: config.platform.authUrl, deviceUrl: config.platform.deviceUrl, planningUrl: config.platform.planningUrl },
      probes,
    )),
  );
  results.push(await checkCredentials(probes));
  results.push(await checkRegistration(probes));
  results.push(checkDisk(config.dataDir, config.storage.minFreeBytes));
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

function nmeaReader(config: Config): NmeaReader {
  if (!config.gnss.path) {
    const file = config.gnss.replayFile ?? '';
    return async () => readFileSync(file).subarray(0, 64 * 1024);
  }
  const path = config.gnss.path;
  return async (baud, ms) => {
    const { SerialPort } = await import('serialport');
    const port = new SerialPort({ path, baudRate: baud ?? config.gnss.baudRate, autoOpen: false });
    await new Promise<void>((resolve, reject) => port.open((e) => (e ? reject(e) : resolve())));
    const chunks: Buffer[] = [];
    port.on('data', (c: Buffer) => chunks.push(c));
    await new Promise((r) => setTimeout(r, ms));
    await new Promise<void>((resolve) => port.close(() => resolve()));
    return Buffer.concat(chunks);
  };
}

function platformProbes(config: Config): PlatformProbes {
  const dispatcher = createPlatformDispatcher({
    maxConnections: 2,
    requestTimeoutMs: 10_000,
    http2: config.platform.http2,
    ...(config.platform.caFile ? { caFile: config.platform.caFile } : {}),
  });
  // Doctor prints what the token service said: an echo of the password in it is redacted (issue 11.5).
  const redactor = new SecretRedactor();
  const http = new PlatformHttp({ dispatcher, requestTimeoutMs: 10_000, maxResponseBytes: config.platform.maxResponseBytes, redactor });
  return {
    lookup: async (host) => (await lookup(host)).address,
    probe: (url) => http.probe(url, 'address check'),
    grant: async () => {
      const outcome = await new TokenClient({ http, authUrl: config.platform.authUrl, wallMs: Date.now, redactor }).password(
        config.credentials.username,
        config.credentials.password,
      );
      if (outcome.kind === 'pair') return 'accepted';
      if (outcome.kind === 'rejected') return 'rejected';
      throw outcome.error;
    },
    registeredDevice: async () => {
      const store = ReadOnlyStore.open(config.dataDir);
      try {
        return store?.registration()?.deviceUUID;
      } finally {
        store?.close();
      }
    },
  };
}
