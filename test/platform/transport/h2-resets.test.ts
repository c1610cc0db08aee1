import { describe, expect, it, onTestFinished } from 'vitest';
import { PlatformError } from '../../../src/errors.js';
import { createPlatformDispatcher } from '../../../src/platform/transport/dispatcher.js';
import { mayHaveReachedServer } from '../../../src/platform/transport/http-errors.js';
import { PlatformHttp, REFUSED_STREAM_RETRIES } from '../../../src/platform/transport/http.js';
import { PlatformSimulator } from '../../../src/sim/index.js';
import type { FaultSpec, Http2ErrorName } from '../../../src/sim/faults.js';
import { makeThrowawayCa } from '../../../src/sim/throwaway-ca.js';
import { tempDir } from '../../helpers/tmp.js';

/** The simulator over TLS with HTTP/2 and the agent's own dispatcher, on loopback. */
async function h2(): Promise<{ sim: PlatformSimulator; http: PlatformHttp; send: () => Promise<unknown> }> {
  const ca = makeThrowawayCa(tempDir('ta-ca-'));
  const sim = new PlatformSimulator({ users: [{ username: 'u', password: 'p' }] });
  const urls = await sim.start({ tls: { key: ca.key, cert: ca.cert, protocols: 'h2' }, idleTimeoutMs: 60_000 });
  const dispatcher = createPlatformDispatcher({ caFile: ca.caFile, maxConnections: 4, requestTimeoutMs: 5000, idleTimeoutMs: 10_000 });
  onTestFinished(async () => {
    await dispatcher.close();
    await sim.stop();
  });
  const http = new PlatformHttp({ dispatcher, requestTimeoutMs: 5000, maxResponseBytes: 1 << 20 });
  const login = await http.send({
    method: 'POST',
    url: `${urls.authUrl}/auth/password`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'username=u&password=p',
    what: 'login',
  });
  const token = (login.body as { access_token: string }).access_token;
  let n = 0;
  const send = () =>
    http
      .send({
        method: 'PUT',
        url: `${urls.planningUrl}/otm/api/v5/events`,
        body: JSON.stringify({
          eventType: 'locationUpdateEvent',
          id: `e${++n}`,
          geoReference: { type: 'latLonPointGeoReference', lat: 52, lon: 5 },
        }),
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        what: 'event upload',
        idempotent: true,
      })
      .then(
        (r) => r,
        (e: unknown) => e,
      );
  return { sim, http, send };
}

describe('what the HTTP/2 server did is what the error says, on a real h2 connection', () => {
  const cases: [Http2ErrorName, string, string][] = [
    ['INTERNAL_ERROR', 'PLATFORM_STREAM_RESET', 'reset the HTTP/2 stream (RST_STREAM INTERNAL_ERROR)'],
    ['ENHANCE_YOUR_CALM', 'PLATFORM_STREAM_RESET', 'reset the HTTP/2 stream (RST_STREAM ENHANCE_YOUR_CALM)'],
    ['CANCEL', 'PLATFORM_STREAM_RESET', 'reset the HTTP/2 stream (RST_STREAM CANCEL or NO_ERROR)'],
  ];
  for (const [h2Code, code, words] of cases) {
    it(`RST_STREAM ${h2Code}: ${code}, "${words}", not "connection failed"`, async () => {
      const { sim, send } = await h2();
      sim.setFaults('events', { resetStream: { rate: 1, code: h2Code } });
      const e = (await send()) as PlatformError;
      expect(e).toBeInstanceOf(PlatformError);
      expect(e.code).toBe(code);
      expect(e.message).toMatch(new RegExp(`^event upload: 127\\.0\\.0\\.1:\\d+ ${words.replace(/[()]/g, '\\$&')}$`));
      expect(e.errorClass).toBe('transient');
      expect(mayHaveReachedServer(e)).toBe(true); // reset after it may have been processed
    });
  }

  it('GOAWAY: PLATFORM_GOAWAY with its code', async () => {
    const { sim, send } = await h2();
    sim.setFaults('events', { goAway: { rate: 1, code: 'ENHANCE_YOUR_CALM' } });
    const e = (await send()) as PlatformError;
    expect(e.code).toBe('PLATFORM_GOAWAY');
    expect(e.message).toMatch(/^event upload: 127\.0\.0\.1:\d+ closed the HTTP\/2 connection \(GOAWAY ENHANCE_YOUR_CALM\)$/);
    // The next request opens a new connection and goes through.
    sim.setFaults('events', undefined);
    expect(await send()).toMatchObject({ status: 200 });
  });
});

describe('a refused stream goes again at once, a bounded number of times', () => {
  it(`a few refusals are absorbed by immediate resends; past ${REFUSED_STREAM_RETRIES} the caller sees PLATFORM_STREAM_REFUSED, not processed`, async () => {
    const { sim, http, send } = await h2();
    const refuse = (limit: number): FaultSpec => ({ resetStream: { rate: 1, code: 'REFUSED_STREAM' }, limit });
    sim.setFaults('events', refuse(REFUSED_STREAM_RETRIES));
    const t0 = performance.now();
    expect(await send()).toMatchObject({ status: 200 });
    expect(http.refusedStreamsRetried).toBe(REFUSED_STREAM_RETRIES);
    // At once: no backoff between the resends (loopback; a generous bound for a loaded machine).
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(sim.events.size).toBe(1);

    sim.setFaults('events', refuse(REFUSED_STREAM_RETRIES + 1));
    const e = (await send()) as PlatformError;
    expect(e.code).toBe('PLATFORM_STREAM_REFUSED');
    expect(e.message).toMatch(/reset the HTTP\/2 stream \(RST_STREAM REFUSED_STREAM: not processed\)$/);
    expect(mayHaveReachedServer(e)).toBe(false);
    expect(sim.events.size).toBe(1);
  });
});
