import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SimUrls } from '../sim/index.js';
import { writeFileAtomic } from '../system/atomic-file.js';
import type { AgentTuning } from '../agent-options.js';

export const DEMO_USER = { username: 'demo', password: 'demo-password' };

export interface DemoConfigOptions {
  dir: string;
  urls: SimUrls;
  replayFile: string;
  replaySpeed: number;
  /** The value file the demo switches as its ignition (ignition.ts). */
  ignitionFile: string;
}

/** The default ignition.debounceS: a cranking dip is not an engine stop. */
const DEBOUNCE_DRIVE_S = 2;

/**
 * The demo daemon's upload backoffs (demo-daemon.ts): short enough that the backlog drains within
 * seconds of the outage, where the daemon's 5 min would hold it past the end of a sped-up drive.
 */
export const DEMO_TUNING: AgentTuning = { upload: { minBackoffMs: 200, maxBackoffMs: 2000 } };

/**
 * The daemon's configuration for the demo: the simulator's loopback addresses, the password in a
 * 0600 file (as in production), the synthetic drive as the receiver, a value file the demo switches
 * as the ignition, the status socket in the temp
 * directory (one gateway, not a fleet: no start-up spread, backlog unpaced).
 */
export function writeDemoConfig(o: DemoConfigOptions): string {
  const passwordFile = path.join(o.dir, 'password');
  writeFileAtomic(passwordFile, `${DEMO_USER.password}\n`, { mode: 0o600 });
  const config = {
    environment: 'staging',
    platform: {
      authUrl: o.urls.authUrl,
      deviceUrl: o.urls.deviceUrl,
      planningUrl: o.urls.planningUrl,
      startupJitterS: 0,
    },
    credentials: { username: DEMO_USER.username, passwordFile },
    device: { externalSystemId: 'demo-fleet', externalDeviceId: 'demo-gateway-1', carrierCode: 'SIM', licensePlate: 'DEMO-01' },
    gnss: { replayFile: o.replayFile, replaySpeed: o.replaySpeed },
    // The debounce and the polls are wall time and the drive is sped up: 2 s of the drive's time,
    // as on a real one, and polls often enough to date a change within an epoch or so.
    ignition: { file: o.ignitionFile, onAbove: 0, pollMs: 100, debounceS: Math.round((DEBOUNCE_DRIVE_S / o.replaySpeed) * 1000) / 1000 },
    dataDir: path.join(o.dir, 'data'),
    log: { level: 'warn' },
    status: { socketPath: path.join(o.dir, 'status.sock') },
  };
  const file = path.join(o.dir, 'config.json');
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  return file;
}
