import { statSync } from 'node:fs';
import { systemClock } from '../../../src/system/clock.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import { TlsSessionCache } from '../../../src/platform/transport/connector.js';
import { createPlatformDispatcher } from '../../../src/platform/transport/dispatcher.js';
import { PlatformHttp } from '../../../src/platform/transport/http.js';
import {
  MAX_TICKET_AGE_MS,
  TLS_SESSIONS_META_KEY,
  ticketKeyOf,
  TlsSessionStore,
  trustFingerprint,
} from '../../../src/platform/transport/tls-session-store.js';
import { PlatformSimulator } from '../../../src/sim/index.js';
import { makeThrowawayCa } from '../../../src/sim/throwaway-ca.js';
import { databasePath, openDatabase } from '../../../src/store/database.js';
import { MetaStore } from '../../../src/store/meta.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';

/** TLS session tickets across a restart: kept in agent.db, discarded when they must be. */
function store(dataDir: string, over: { trust?: string; keys?: string[]; now?: () => number } = {}) {
  const db = openDatabase({ dataDir, logger: silentLogger() });
  onTestFinished(() => {
    db.close();
  });
  const meta = new MetaStore(db);
  const now = over.now ?? (() => Date.UTC(2026, 10, 24, 12));
  const clock = { wallMs: now };
  const cache = new TlsSessionCache({ clock });
  const s = new TlsSessionStore({
    meta,
    cache,
    trust: over.trust ?? 'roots-1',
    keys: new Set(over.keys ?? ['planning.example:443', 'auth.example:443']),
    clock,
  });
  return { meta, cache, s };
}

describe('TlsSessionStore', () => {
  it('a saved ticket comes back in the next process, newest first, only for configured origins', () => {
    const dir = tempDir('ta-tls-');
    const a = store(dir);
    a.cache.add('planning.example:443', Buffer.from('p1'));
    a.cache.add('planning.example:443', Buffer.from('p2'));
    a.cache.add('auth.example:443', Buffer.from('a1'));
    a.cache.add('old.example:443', Buffer.from('o1'));
    expect(a.s.save()).toBe(true);
    expect(a.s.save()).toBe(false); // nothing changed since
    const b = store(dir);
    expect(b.s.load()).toEqual({ loaded: 3, discarded: undefined });
    expect(b.cache.take('planning.example:443')).toEqual(Buffer.from('p2'));
    expect(b.cache.take('auth.example:443')).toEqual(Buffer.from('a1'));
    expect(b.cache.count('old.example:443')).toBe(0);
    // Key material in a file nobody else reads.
    expect(statSync(databasePath(dir)).mode & 0o077).toBe(0);
  });

  it('discards the tickets when the trusted roots changed, when older than 7 days, or unreadable', () => {
    const dir = tempDir('ta-tls-');
    const t0 = Date.UTC(2026, 10, 24, 12);
    const a = store(dir, { now: () => t0 });
    a.cache.add('planning.example:443', Buffer.from('p1'));
    a.s.save();
    expect(store(dir, { trust: 'roots-2' }).s.load()).toEqual({ loaded: 0, discarded: 'the trusted roots changed' });
    // Discarded means deleted: the right roots do not bring it back either.
    expect(store(dir).s.load()).toEqual({ loaded: 0, discarded: undefined });

    a.s.save();
    a.cache.add('planning.example:443', Buffer.from('p2'));
    a.s.save();
    expect(store(dir, { now: () => t0 + MAX_TICKET_AGE_MS }).s.load().discarded).toMatch(/7 days/);

    const c = store(dir);
    c.meta.set(TLS_SESSIONS_META_KEY, '{not json');
    expect(c.s.load()).toEqual({ loaded: 0, discarded: 'unreadable' });
  });

  it('counts 7 days from when each ticket was received, not from the last save', () => {
    const dir = tempDir('ta-tls-');
    const t0 = Date.UTC(2026, 10, 24, 12);
    let now = t0;
    const a = store(dir, { now: () => now });
    a.cache.add('planning.example:443', Buffer.from('old'));
    a.s.save();
    // Six days on, a new ticket arrives and the cache is saved again: the old one is still 6 days old.
    now = t0 + 6 * 86_400_000;
    a.cache.add('planning.example:443', Buffer.from('new'));
    expect(a.s.save()).toBe(true);
    const b = store(dir, { now: () => t0 + MAX_TICKET_AGE_MS });
    expect(b.s.load()).toEqual({ loaded: 1, discarded: undefined });
    expect(b.cache.count('planning.example:443')).toBe(1);
    expect(b.cache.take('planning.example:443')).toEqual(Buffer.from('new'));
    // Loaded tickets keep their receipt time: saved again, the old one does not come back younger.
    expect(b.cache.entries().map((e) => e.receivedAtWallMs)).toEqual([t0 + 6 * 86_400_000]);
  });

  it('keys as the connector does, and a fingerprint that follows the roots', () => {
    expect(ticketKeyOf('https://planning-receive-api.services.simacan.com')).toBe('planning-receive-api.services.simacan.com:443');
    expect(ticketKeyOf('https://127.0.0.1:8443/api/v1')).toBe('127.0.0.1:8443');
    expect(trustFingerprint(['a', 'b'])).not.toBe(trustFingerprint(['a', 'c']));
  });
});

describe('across a restart, against the simulator', () => {
  it('the first connection of the next process resumes with the saved ticket; without it, a full handshake', async () => {
    const ca = makeThrowawayCa(tempDir('ta-ca-'));
    const sim = new PlatformSimulator();
    const urls = await sim.start({ tls: { key: ca.key, cert: ca.cert, protocols: 'h2' }, idleTimeoutMs: 60_000 });
    onTestFinished(() => sim.stop());
    const dataDir = tempDir('ta-tls-');
    const run = async (persist: boolean) => {
      const dispatcher = createPlatformDispatcher({ caFile: ca.caFile, maxConnections: 1, requestTimeoutMs: 10_000 });
      const db = openDatabase({ dataDir, logger: silentLogger() });
      const s = new TlsSessionStore({
        meta: new MetaStore(db),
        cache: dispatcher.sessions,
        trust: dispatcher.trust,
        keys: new Set([ticketKeyOf(urls.planningUrl)]),
        clock: systemClock,
      });
      if (persist) s.load();
      const http = new PlatformHttp({ dispatcher, requestTimeoutMs: 10_000, maxResponseBytes: 1 << 20 });
      await http.send({ method: 'GET', url: `${urls.adminUrl}/stats`, what: 'stats' });
      // TLS 1.3 tickets arrive after the handshake.
      await waitFor('a session ticket', () => dispatcher.sessions.count(ticketKeyOf(urls.planningUrl)) > 0);
      if (persist) s.save();
      const w = dispatcher.wire.snapshot();
      await dispatcher.close();
      db.close();
      return w;
    };
    expect(await run(true)).toMatchObject({ fullHandshakes: 1, resumedHandshakes: 0 });
    expect(await run(true)).toMatchObject({ fullHandshakes: 0, resumedHandshakes: 1 });
    expect(await run(false)).toMatchObject({ fullHandshakes: 1, resumedHandshakes: 0 });
  });
});
