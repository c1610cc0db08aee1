/**
 * Default platform addresses and the staging rule (docs/platform-contract.md, Services and
 * addresses): the staging host is the production host with "-stg" appended to its
 * first label.
 */
export const PRODUCTION_ADDRESSES = {
  authUrl: 'https://auth-service.services.simacan.com/api/v1',
  planningUrl: 'https://planning-receive-api.services.simacan.com',
} as const;

export type Environment = 'production' | 'staging';

/** `https://a.b.c/x` -> `https://a-stg.b.c/x`. Idempotent: a host already ending in -stg is kept. */
export function stagingAddress(url: string): string {
  const u = new URL(url);
  const labels = u.hostname.split('.');
  const first = labels[0] ?? '';
  if (!first.endsWith('-stg')) labels[0] = `${first}-stg`;
  u.hostname = labels.join('.');
  return u.toString().replace(/\/$/, url.endsWith('/') ? '/' : '');
}

/** The default address of a service for an environment. */
export function defaultAddress(key: keyof typeof PRODUCTION_ADDRESSES, environment: Environment): string {
  const production = PRODUCTION_ADDRESSES[key];
  return environment === 'staging' ? stagingAddress(production) : production;
}
