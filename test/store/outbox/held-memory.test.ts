import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { HELD_ROW_HEAP_BYTES, MAX_HELD_HEAP_BYTES, WAITING_FIX_HEAP_BYTES } from '../../../src/fix/held-memory.js';
import type { RecordedFix } from '../../../src/fix/fix.js';
import { eventIdBytes } from '../../../src/store/event-id.js';
import { MAX_BUFFER_WHILE_FULL } from '../../../src/store/outbox/outbox.js';
import { toRow, type OutboxRow } from '../../../src/store/outbox/row.js';
import { fixAt, IDENTITY } from './helpers.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap and backing-store bytes per item of what `make` builds, measured over n items with the collector run. */
function bytesPer<T>(n: number, make: (i: number) => T): number {
  const kept: T[] = new Array<T>(n);
  gc();
  const before = process.memoryUsage();
  for (let i = 0; i < n; i++) kept[i] = make(i);
  gc();
  const after = process.memoryUsage();
  const bytes = after.heapUsed - before.heapUsed + (after.arrayBuffers - before.arrayBuffers);
  expect(kept.length).toBe(n);
  return bytes / n;
}

/** The held fixes are bounded by bytes: these figures are what turns the budget into a number of fixes. */
describe('what a fix held in memory costs', () => {
  it('an outbox row and a waiting fix stay within the bytes the budget counts for them', () => {
    const row = bytesPer<OutboxRow>(50_000, (i) => {
      const f = fixAt(i, { lat: 52 + Math.random() });
      return toRow(i, eventIdBytes(IDENTITY.externalSystemId, IDENTITY.externalDeviceId, f.time), f)!;
    });
    const fix = bytesPer<RecordedFix>(50_000, (i) => fixAt(i, { lat: 52 + Math.random() }));
    process.stderr.write(
      `held in memory: outbox row ${row.toFixed(0)} B (counted ${HELD_ROW_HEAP_BYTES}), waiting fix ${fix.toFixed(0)} B (counted ${WAITING_FIX_HEAP_BYTES}); ${MAX_BUFFER_WHILE_FULL} rows in ${MAX_HELD_HEAP_BYTES / 1048576} MiB\n`,
    );
    expect(row).toBeLessThanOrEqual(HELD_ROW_HEAP_BYTES);
    expect(fix).toBeLessThanOrEqual(WAITING_FIX_HEAP_BYTES);
    expect(MAX_BUFFER_WHILE_FULL * HELD_ROW_HEAP_BYTES).toBeLessThanOrEqual(MAX_HELD_HEAP_BYTES);
  });
});
