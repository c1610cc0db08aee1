/**
 * Conformance against gpsd: every log of the shared corpus is decoded as `nmea decode` does and
 * compared with gpsd's TPV reports in its .chk file. At least 99% of gpsd's fixes (mode >= 2)
 * must match, and every difference, spurious fixes included, must be one listed with its reason
 * in test/fixtures/nmea/gpsd-differences.txt: a new difference fails, and so does a listed one
 * that went away (so the list stays true).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HAVE_CORPUS, REPO_ROOT, corpusLogs, corpusPath } from './helpers/corpus.js';
import { decodeFile } from './helpers/decode-file.js';
import { compareWithGpsd, readGpsdTpvs, type Difference } from './helpers/gpsd-chk.js';

const EXPECTED_FILE = path.join(REPO_ROOT, 'test/fixtures/nmea/gpsd-differences.txt');

function expectedDifferences(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync(EXPECTED_FILE, 'utf8').split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const [key, reason] = line.split(' | ');
    if (key === undefined || reason === undefined || reason.trim() === '')
      throw new Error(`gpsd-differences.txt: line without a reason: ${line}`);
    out.set(key.trim(), reason.trim());
  }
  return out;
}

describe.skipIf(!HAVE_CORPUS)('conformance with gpsd on the corpus', () => {
  const logs = corpusLogs();
  let total = 0;
  let matched = 0;
  const differences: Difference[] = [];
  for (const log of logs) {
    const c = compareWithGpsd(log, decodeFile(corpusPath(log)), readGpsdTpvs(corpusPath(`${log}.chk`)));
    total += c.total;
    matched += c.matched;
    differences.push(...c.differences);
  }

  it('reads the whole corpus', () => {
    expect(logs.length).toBe(67);
    expect(total).toBeGreaterThan(1000);
  });

  it('matches at least 99% of gpsd fixes', () => {
    console.log(
      `gpsd conformance: ${matched}/${total} fixes matched (${((100 * matched) / total).toFixed(2)}%), ${differences.length} listed differences`,
    );
    expect(matched / total).toBeGreaterThanOrEqual(0.99);
  });

  it('has exactly the differences listed, each with its reason', () => {
    const expected = expectedDifferences();
    const actual = differences.map((d) => `${d.log} ${d.time} ${d.kind}`);
    const unexpected = differences
      .filter((d) => !expected.has(`${d.log} ${d.time} ${d.kind}`))
      .map((d) => `${d.log} ${d.time} ${d.kind} (${d.detail})`);
    const gone = [...expected.keys()].filter((k) => !actual.includes(k));
    expect(unexpected, 'new differences from gpsd').toEqual([]);
    expect(gone, 'listed differences that no longer occur').toEqual([]);
  });
});
