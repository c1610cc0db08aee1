import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { silentLogger } from '../../src/log.js';
import { openDatabase } from '../../src/store/database.js';
import { SNAPSHOT_SCHEMA, type StatusSnapshot } from '../../src/status/snapshot.js';

/** A config file for a temp data dir; the socket lives in the data dir. */
export function writeConfig(dir: string, extra: Record<string, unknown> = {}): string {
  const file = path.join(dir, 'config.json');
  writeFileSync(
    file,
    JSON.stringify({
      environment: 'staging',
      platform: { authUrl: 'http://127.0.0.1:9/api/v1', deviceUrl: 'http://127.0.0.1:9/api/public/v2/', planningUrl: 'http://127.0.0.1:9' },
      credentials: { username: 'agent', password: 'agent-password' },
      device: { externalSystemId: 'ACME', carrierCode: 'CARRIER1', externalDeviceId: 'gw-0042' },
      gnss: { replayFile: 'drive.nmea' },
      dataDir: path.join(dir, 'data'),
      status: { socketPath: path.join(dir, 'status.sock') },
      ...extra,
    }),
  );
  return file;
}

/** A real database as a daemon leaves it: identity, registration, a token pair, 3 pending fixes. */
export function seedDatabase(dataDir: string, wallMs: number): void {
  const db = openDatabase({ dataDir, logger: silentLogger() });
  db.prepare('INSERT INTO device_identity (id, external_device_id, source, chosen_at) VALUES (1, ?, ?, ?)').run(
    'gw-0042',
    'config',
    wallMs - 86_400_000,
  );
  db.prepare(
    'INSERT INTO device_registration (id, external_system_id, external_device_id, device_uuid, config_hash, response_json, registered_at) VALUES (1, ?, ?, ?, ?, ?, ?)',
  ).run('ACME', 'gw-0042', '3f1c2a9e-0000-4000-8000-00000000beef', 'h', '{}', wallMs - 86_000_000);
  db.prepare(
    'INSERT INTO token_pair (id, access_token, refresh_token, id_token, token_type, expires_in_s, obtained_at, generation) VALUES (1, ?, ?, NULL, ?, ?, ?, 1)',
  ).run('SECRET-ACCESS-TOKEN', 'SECRET-REFRESH-TOKEN', 'Bearer', 3600, wallMs - 600_000);
  const ins = db.prepare('INSERT INTO outbox (event_id, fix_time, lat_e7, lon_e7) VALUES (?, ?, ?, ?)');
  for (let i = 0; i < 3; i++) ins.run(Buffer.alloc(16, i + 1), wallMs - 300_000 + i * 1000, 520_907_000, 51_214_000);
  db.prepare('INSERT INTO counters (name, value) VALUES (?, ?)').run('auth.passwordGrants', 1);
  db.prepare('INSERT INTO counters (name, value) VALUES (?, ?)').run('upload.sent', 1234);
  db.close();
}

/** A live snapshot as the daemon would give it, healthy unless overridden. */
export function liveSnapshot(wallMs: number, dataDir: string, patch: (s: StatusSnapshot) => void = () => undefined): StatusSnapshot {
  const s: StatusSnapshot = {
    schema: SNAPSHOT_SCHEMA,
    takenAt: wallMs,
    source: 'daemon',
    daemon: { running: true, version: '0.1.0', pid: 4242, uptimeS: 3723 },
    receiver: {
      port: '/dev/ttyACM0',
      link: 'open',
      lastSentenceAgeS: 0.2,
      mode: 3,
      fixTime: wallMs - 300,
      clockOffsetS: 0.3,
      lat: 52.0907,
      lon: 5.1214,
      speedKmh: 54,
      hdop: 0.8,
      satellitesUsed: 3,
      constellations: [
        { constellation: 'GPS', inView: 2, used: 2 },
        { constellation: 'Galileo', inView: 2, used: 1 },
      ],
      satellites: [
        { constellation: 'GPS', id: 5, elevation: 60, azimuth: 120, snr: 45, used: true },
        { constellation: 'GPS', id: 12, elevation: 30, azimuth: 200, snr: 38, used: true },
        { constellation: 'Galileo', id: 7, elevation: 45, azimuth: 80, snr: 41, used: true, signalId: 7 },
        { constellation: 'Galileo', id: 19, elevation: 5, azimuth: 300, used: false, signalId: 7 },
      ],
    },
    registration: {
      externalSystemId: 'ACME',
      externalDeviceId: 'gw-0042',
      externalDeviceIdSource: 'config',
      deviceUUID: '3f1c2a9e-0000-4000-8000-00000000beef',
    },
    token: { state: 'valid', ageS: 600, passwordGrants: 1, refreshes: 2 },
    outbox: { pending: 1, oldestPendingAgeS: 1, sentToday: 1234, thinned: 0, deadLetters: 0, recorded: 1235 },
    upload: { lastSuccessAt: wallMs - 1000 },
    disk: { dataDir, databaseBytes: 1_234_567, freeBytes: 10 * 2 ** 30, minFreeBytes: 200 * 2 ** 20 },
  };
  patch(s);
  return s;
}
