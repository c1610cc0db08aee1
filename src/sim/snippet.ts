import type { SimUrls } from './server.js';

/** A configuration that points the agent at a running simulator (printed by `telematics-agent sim`). */
export function configSnippet(urls: SimUrls, user: { username: string; password: string }): Record<string, unknown> {
  return {
    platform: { authUrl: urls.authUrl, deviceUrl: urls.deviceUrl, planningUrl: urls.planningUrl },
    credentials: { username: user.username, password: user.password },
    device: { externalSystemId: 'simulator', carrierCode: 'SIM' },
  };
}
