/**
 * bench:wire, across a restart: the handshake bytes of a new process's first
 * connections, with the TLS session tickets the previous process saved in its database and
 * without. Two origins as in the field (token service and planning host; the device service is a
 * third there), the same simulator throughout (its ticket key unchanged, as a platform's is across
 * an agent's restart).
 */
import { systemClock } from '../src/system/clock.js';
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { silentLogger } from '../src/log.js';
import { createPlatformDispatcher } from '../src/platform/transport/dispatcher.js';
import { PlatformHttp } from '../src/platform/transport/http.js';
import { ticketKeyOf, TlsSessionStore } from '../src/platform/transport/tls-session-store.js';
import { PlatformSimulator } from '../src/sim/index.js';
import type { ThrowawayCa } from '../src/sim/throwaway-ca.js';
import { openDatabase } from '../src/store/database.js';
import { MetaStore } from '../src/store/meta.js';

export interface RestartCost {
  origins: number;
  /** Bytes both ways to the end of the handshakes of a start's first connections. */
  withTickets: { bytes: number; full: number; resumed: number };
  withoutTickets: { bytes: number; full: number; resumed: number };
}

export async function restartCost(ca: ThrowawayCa, dir: string): Promise<RestartCost> {
  const sim = new PlatformSimulator();
  const urls = await sim.start({ tls: { key: ca.key, cert: ca.cert, protocols: 'h2' }, idleTimeoutMs: 60_000 });
  const auth = urls.adminUrl.replace('127.0.0.1', 'localhost');
  const targets = [`${urls.adminUrl}/stats`, `${auth}/stats`];
  const dataDir = mkdtempSync(path.join(dir, 'restart-'));
  const start = async (persist: boolean) => {
    const dispatcher = createPlatformDispatcher({ caFile: ca.caFile, maxConnections: 1, requestTimeoutMs: 10_000 });
    const db = openDatabase({ dataDir, logger: silentLogger() });
    const store = new TlsSessionStore({
      meta: new MetaStore(db),
      cache: dispatcher.sessions,
      trust: dispatcher.trust,
      keys: new Set([urls.planningUrl, auth].map(ticketKeyOf)),
      clock: systemClock,
    });
    if (persist) store.load();
    const http = new PlatformHttp({ dispatcher, requestTimeoutMs: 10_000, maxResponseBytes: 1 << 20 });
    for (const url of targets) await http.send({ method: 'GET', url, what: 'stats' });
    // TLS 1.3 tickets come after the handshake; a process runs long enough to have them.
    for (let i = 0; i < 100 && dispatcher.sessions.size < targets.length; i++) await new Promise((r) => setTimeout(r, 10));
    if (persist) store.save();
    const w = dispatcher.wire.snapshot();
    await dispatcher.close();
    db.close();
    return { bytes: w.handshakeBytes.full + w.handshakeBytes.resumed, full: w.fullHandshakes, resumed: w.resumedHandshakes };
  };
  try {
    await start(true); // the previous run, which saves its tickets
    const withTickets = await start(true);
    const withoutTickets = await start(false);
    return { origins: targets.length, withTickets, withoutTickets };
  } finally {
    await sim.stop();
  }
}
