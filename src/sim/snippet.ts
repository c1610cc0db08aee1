import type { SimUrls } from './server.js';

/** What the agent needs to know that the simulator cannot: left as `<...>` placeholders, which `config check` names until filled in. */
export const SIM_CONFIG_PLACEHOLDERS = {
  replayFile: '<NMEA log to replay, e.g. written by: telematics-agent drive --out drive.nmea (or set gnss.path to a receiver instead)>',
  dataDir: '<directory for the agent database, e.g. ./sim-data>',
} as const;

/**
 * A complete configuration that points the agent at a running simulator (printed by
 * `telematics-agent sim`): `config check` accepts it once the gnss and dataDir placeholders are
 * filled in. Staging-free: the simulator's own addresses, http on loopback.
 */
export function configSnippet(urls: SimUrls, user: { username: string; password: string }): Record<string, unknown> {
  return {
    // One agent against its own simulator: no fleet to spread, so its first contact is at once.
    platform: { authUrl: urls.authUrl, deviceUrl: urls.deviceUrl, planningUrl: urls.planningUrl, startupJitterS: 0 },
    credentials: { username: user.username, password: user.password },
    device: { externalSystemId: 'simulator', carrierCode: 'SIM' },
    gnss: { replayFile: SIM_CONFIG_PLACEHOLDERS.replayFile },
    dataDir: SIM_CONFIG_PLACEHOLDERS.dataDir,
  };
}
