import path from 'node:path';
import { defaultAddress } from './addresses.js';
import type { RawConfig } from './schema.js';

export type ResolvedPlatform = RawConfig['platform'] & { authUrl: string; planningUrl: string };

/**
 * Fills the platform addresses the file left out from the environment's defaults, each in one
 * spelling, and resolves caFile against the configuration file's folder.
 */
export function resolveAddresses(raw: RawConfig, baseDir: string): ResolvedPlatform {
  const p = raw.platform;
  return {
    ...p,
    authUrl: p.authUrl ?? defaultAddress('authUrl', raw.environment),
    planningUrl: (p.planningUrl ?? defaultAddress('planningUrl', raw.environment)).replace(/\/+$/, ''),
    deviceUrl: p.deviceUrl.endsWith('/') ? p.deviceUrl : `${p.deviceUrl}/`,
    ...(p.caFile !== undefined ? { caFile: path.resolve(baseDir, p.caFile) } : {}),
  };
}

/** Relative paths in the file mean relative to the file's folder, not to the working directory. */
export function resolveFilePaths(raw: RawConfig, baseDir: string): Pick<RawConfig, 'dataDir' | 'gnss'> {
  return {
    dataDir: path.resolve(baseDir, raw.dataDir),
    gnss: {
      ...raw.gnss,
      ...(raw.gnss.replayFile !== undefined ? { replayFile: path.resolve(baseDir, raw.gnss.replayFile) } : {}),
    },
  };
}
