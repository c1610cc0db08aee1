import type { Fix } from '../src/fix/fix.js';
import { createDecoder } from '../src/gnss/decoder.js';
import { QualityGate } from '../src/gnss/quality-gate.js';

/** The fixes of an NMEA text that pass the quality gate, in order: what the policy and the motion tracker are offered. */
export function gatedFixes(text: Buffer): Fix[] {
  // The corpus dates back to 1999: a release date of 2000 lets its fixes through the date check.
  const gate = new QualityGate({ releaseDateMs: Date.UTC(2000, 0, 1), minDateMarginDays: 365 });
  const fixes: Fix[] = [];
  const decoder = createDecoder({ onFix: (f) => void (gate.check(f) === undefined && fixes.push(f)) });
  for (let i = 0; i < text.length; i += 4096) decoder.pushChunk(text.subarray(i, i + 4096));
  decoder.flush();
  return fixes;
}
