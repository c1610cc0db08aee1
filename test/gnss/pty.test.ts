/**
 * The real serial source on a real pseudo-terminal (socat): a corpus log written in random-sized
 * chunks that split sentences and checksums decodes to the same fixes as `nmea decode`; when the
 * writer (socat, which owns the pty pair) is killed and started again, the source reconnects and
 * fixes resume. No timing assertions: waits poll for the data, with generous limits.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createDecoder, type Decoder } from '../../src/gnss/decoder.js';
import type { Fix } from '../../src/fix/fix.js';
import { silentLogger } from '../../src/log.js';
import { SerialSource } from '../../src/gnss/sources/serial-source.js';
import { HAVE_CORPUS, corpusPath } from './helpers/corpus.js';
import { decodeFile } from './helpers/decode-file.js';
import { waitFor } from '../helpers/wait.js';

const HAVE_SOCAT = spawnSync('socat', ['-V']).status === 0;
if (!HAVE_SOCAT) console.warn('gnss pty test: socat is not installed; skipped');

const LOG = 'ublox-neo-m9n-nmea.log';

function startSocat(dev: string, feed: string): ChildProcess {
  return spawn('socat', [`pty,raw,echo=0,link=${dev}`, `pty,raw,echo=0,link=${feed}`], { stdio: 'ignore' });
}

async function writeInRandomChunks(feed: string, data: Buffer, seed: number): Promise<void> {
  let s = seed;
  const random = (): number => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
  const fh = await open(feed, 'w');
  try {
    for (let i = 0; i < data.length; ) {
      const n = 1 + Math.floor(random() * 120);
      await fh.write(data.subarray(i, i + n));
      i += n;
    }
  } finally {
    await fh.close();
  }
}

describe.skipIf(!HAVE_SOCAT || !HAVE_CORPUS)('serial source on a real pty', () => {
  it('decodes like nmea decode, and resumes after the writer restarts', async () => {
    // Made inside the test: a folder made at describe level is made even when the describe is
    // skipped (no socat, no shared test data), and its clean-up then never runs.
    const dir = mkdtempSync(path.join(tmpdir(), 'gnss-pty-'));
    const dev = path.join(dir, 'receiver');
    const feed = path.join(dir, 'feed');
    let socat: ChildProcess | undefined;
    let source: SerialSource | undefined;
    onTestFinished(async () => {
      await source?.stop();
      socat?.kill();
      rmSync(dir, { recursive: true, force: true });
    });

    const data = readFileSync(corpusPath(LOG));
    const expected = decodeFile(corpusPath(LOG));
    expect(expected.length).toBeGreaterThan(50);

    socat = startSocat(dev, feed);
    await waitFor('socat ptys', () => existsSync(dev) && existsSync(feed));

    let decoder: Decoder = createDecoder();
    let fixes: Fix[] = [];
    source = new SerialSource({ path: dev, baudRate: 9600, logger: silentLogger(), backoff: { initialMs: 50, maxMs: 500, jitter: 0.5 } });
    source.onData((chunk) => fixes.push(...decoder.pushChunk(chunk)));
    await source.start();
    await waitFor('the port to open', () => source?.link().status === 'open');

    await writeInRandomChunks(feed, data, 42);
    await waitFor('all bytes', () => decoder.counters.lines.bytes >= data.length);
    fixes.push(...decoder.flush());
    expect(fixes).toEqual(expected);

    // The writer goes away: the port errors or closes, the supervisor retries.
    const dead = socat;
    dead.kill('SIGKILL');
    await new Promise((r) => dead.once('exit', r));
    await waitFor('the link to be lost', () => source?.link().status !== 'open');
    expect(source.link().lastError).toBeDefined();
    // A killed socat leaves its links behind, pointing at freed pty numbers that another process
    // may have taken since; remove them so that the waits below see the new pair's links.
    rmSync(dev, { force: true });
    rmSync(feed, { force: true });

    socat = startSocat(dev, feed);
    await waitFor('socat ptys again', () => existsSync(dev) && existsSync(feed));
    await waitFor('the link to reopen', () => source?.link().status === 'open');
    decoder = createDecoder();
    fixes = [];
    await writeInRandomChunks(feed, data, 7);
    await waitFor('fixes to resume', () => decoder.counters.lines.bytes >= data.length);
    fixes.push(...decoder.flush());
    expect(fixes).toEqual(expected);
  });
});
