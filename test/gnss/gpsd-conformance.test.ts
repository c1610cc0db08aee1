/**
 * The corpus through the real gpsd: gpsfake feeds each log of the shared gpsd corpus to a real gpsd
 * on a free loopback port, the agent's GpsdSource watches it with "nmea":true, and the agent's
 * decoder turns what gpsd passes through into fixes. They must be the fixes the serial path makes
 * from the same log, fix for fix, except where test/fixtures/nmea/gpsd-source-differences.txt
 * lists the log with its reason (a new difference fails, and so does a listed one that went away);
 * the conformance figure against gpsd's .chk files is printed beside the serial path's.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDecoder } from '../../src/gnss/decoder.js';
import type { Fix } from '../../src/fix/fix.js';
import { GpsdSource } from '../../src/gnss/sources/gpsd-source.js';
import { silentLogger } from '../../src/log.js';
import { HAVE_GPSD, startGpsfake } from '../helpers/gpsd.js';
import { freePort } from '../helpers/ports.js';
import { waitFor } from '../helpers/wait.js';
import { HAVE_CORPUS, REPO_ROOT, corpusLogs, corpusPath } from './helpers/corpus.js';
import { decodeFile } from './helpers/decode-file.js';
import { compareWithGpsd, readGpsdTpvs } from './helpers/gpsd-chk.js';

const EXPECTED_FILE = path.join(REPO_ROOT, 'test/fixtures/nmea/gpsd-source-differences.txt');
/** Logs fed at once: each gpsfake polls busily, and the machine has two cores. */
const PARALLEL = 3;

function listed(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync(EXPECTED_FILE, 'utf8').split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const [log, reason] = line.split(' | ');
    if (log === undefined || reason === undefined || reason.trim() === '')
      throw new Error(`gpsd-source-differences.txt: line without a reason: ${line}`);
    out.set(log.trim(), reason.trim());
  }
  return out;
}

/**
 * The log through gpsfake and a real gpsd. A run in which not one byte of NMEA reached the source
 * (gpsfake or its gpsd failed to start, or fed before the source watched: it waits only 1.4 s, and
 * three busy-polling gpsfakes share two cores) of a log that gives fixes on the serial path says
 * nothing about decoding, so it is run again, up to three times; a log that differs with bytes
 * delivered is never retried.
 */
async function throughGpsd(log: string): Promise<Fix[]> {
  const expectsNmea = decodeFile(corpusPath(log)).length > 0;
  for (let attempt = 1; ; attempt++) {
    const run = await throughGpsdOnce(log);
    if (run.bytes > 0 || !expectsNmea || attempt === 3) return run.fixes;
    console.warn(`gpsd conformance: ${log}: no NMEA reached the source (attempt ${attempt}); running it again. gpsfake: ${run.log.trim()}`);
  }
}

/** One run of the log through gpsfake and a real gpsd, decoded from what the GpsdSource delivers. */
async function throughGpsdOnce(log: string): Promise<{ fixes: Fix[]; bytes: number; log: string }> {
  const port = await freePort();
  const fake = startGpsfake(corpusPath(log), port);
  const source = new GpsdSource({
    address: { host: '127.0.0.1', port },
    logger: silentLogger(),
    backoff: { initialMs: 20, maxMs: 50, jitter: 0 },
    silenceMs: 120_000,
  });
  const decoder = createDecoder();
  const fixes: Fix[] = [];
  source.onData((chunk) => fixes.push(...decoder.pushChunk(chunk)));
  try {
    await source.start();
    // gpsfake ends a second after the log (-W 1) and takes its gpsd along: the socket closes after
    // the last byte, and the source goes back to retrying.
    await fake.exited;
    await waitFor(`gpsd's connection for ${log} to close`, () => source.link().status !== 'open', { timeoutMs: 10_000 });
  } finally {
    await source.stop();
    await fake.kill();
  }
  fixes.push(...decoder.flush());
  return { fixes, bytes: source.link().bytes, log: fake.log() };
}

function key(f: Fix): string {
  return JSON.stringify([f.time, f.mode, f.lat, f.lon, f.altMSL, f.speed, f.track, f.satellitesUsed, f.hdop]);
}

describe.skipIf(!HAVE_GPSD || !HAVE_CORPUS)('the corpus through the real gpsd (gpsfake)', () => {
  it("gives the serial path's fixes, fix for fix, and the same conformance with gpsd", { timeout: 600_000 }, async () => {
    const logs = corpusLogs();
    const results = new Map<string, Fix[]>();
    let next = 0;
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        while (next < logs.length) {
          const log = logs[next++] as string;
          results.set(log, await throughGpsd(log));
        }
      }),
    );
    const expected = listed();
    const differing: string[] = [];
    const serial = { total: 0, matched: 0 };
    const gpsd = { total: 0, matched: 0 };
    for (const log of logs) {
      const direct = decodeFile(corpusPath(log));
      const via = results.get(log) ?? [];
      const tpvs = readGpsdTpvs(corpusPath(`${log}.chk`));
      const a = compareWithGpsd(log, direct, tpvs);
      const b = compareWithGpsd(log, via, tpvs);
      serial.total += a.total;
      serial.matched += a.matched;
      gpsd.total += b.total;
      gpsd.matched += b.matched;
      const same = direct.length === via.length && direct.every((f, i) => key(f) === key(via[i] as Fix));
      if (!same) differing.push(`${log} (${direct.length} fixes direct, ${via.length} through gpsd)`);
    }
    const pct = (x: { total: number; matched: number }) => ((100 * x.matched) / x.total).toFixed(2);
    console.log(
      `gpsd conformance: serial path ${serial.matched}/${serial.total} (${pct(serial)}%), through gpsd ${gpsd.matched}/${gpsd.total} (${pct(gpsd)}%); ${differing.length} logs differ between the paths`,
    );
    const unexpected = differing.filter((d) => !expected.has(d.split(' ')[0] as string));
    const gone = [...expected.keys()].filter((log) => !differing.some((d) => d.startsWith(`${log} `)));
    expect(unexpected, 'logs whose fixes through gpsd differ from the serial path').toEqual([]);
    expect(gone, 'listed logs that no longer differ').toEqual([]);
    expect(gpsd.matched / gpsd.total).toBeGreaterThanOrEqual(0.99);
  });
});
