import { ROUTES, type RouteName } from './faults.js';

/** What the simulator counted; readable in-process (`sim.stats`) and over `GET /_sim/stats`. */
export interface SimStats {
  /** Successful password grants. */
  passwordGrants: number;
  /** Password grants refused with 401 (wrong credentials). */
  passwordRejected: number;
  /** Successful refreshes (each rotated the refresh token). */
  refreshes: number;
  /** Refreshes with an already rotated refresh token (the client broke the rotation rule: platform contract, Tokens). */
  refreshReuses: number;
  /** Refreshes with an expired refresh token. */
  refreshExpired: number;
  /** Refreshes with a token the simulator never issued. */
  refreshUnknown: number;
  /** Successful token answers made hostile by a TokenAnswerFault (bad expires_in, bad token characters). */
  hostileTokenAnswers: number;
  /** Access tokens issued with an early expiry. */
  earlyExpiries: number;
  /** 401 answers of the device and planning services (missing, unknown or expired bearer, or injected). */
  unauthorized: number;
  /** Requests per route, including faulted ones. */
  requests: Record<RouteName, number>;
  /** Faults injected per route. */
  faults: Record<RouteName, number>;
  /** Events received whose id was already recorded. */
  duplicates: number;
  /** Events and locations refused with 400. */
  invalidEvents: number;
  invalidLocations: number;
  /** Device upserts that created / updated a device. */
  devicesCreated: number;
  devicesUpdated: number;
  /** Connections accepted, and how many of them speak HTTP/2 (ALPN h2) or HTTP/1.1. */
  connections: { opened: number; h2: number; http1: number };
  /** Routes with a capacity limit (capacity.ts): the limit, requests served and turned away, longest wait. */
  capacity?: Record<string, { ratePerS: number; queueBound?: number; served: number; rejected: number; maxWaitMs: number }>;
}

export function emptyStats(): SimStats {
  const perRoute = (): Record<RouteName, number> => Object.fromEntries(ROUTES.map((r) => [r, 0])) as Record<RouteName, number>;
  return {
    passwordGrants: 0,
    passwordRejected: 0,
    refreshes: 0,
    refreshReuses: 0,
    refreshExpired: 0,
    refreshUnknown: 0,
    hostileTokenAnswers: 0,
    earlyExpiries: 0,
    unauthorized: 0,
    requests: perRoute(),
    faults: perRoute(),
    duplicates: 0,
    invalidEvents: 0,
    invalidLocations: 0,
    devicesCreated: 0,
    devicesUpdated: 0,
    connections: { opened: 0, h2: 0, http1: 0 },
  };
}
