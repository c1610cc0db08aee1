import { describe, expect, it } from 'vitest';
import { HELD_ROW_HEAP_BYTES } from '../../../src/fix/held-memory.js';
import { MAX_BUFFER_WHILE_FULL } from '../../../src/store/outbox/outbox.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { tempDir } from '../../helpers/tmp.js';
import { fixAt, openOutbox } from './helpers.js';

/** One 10 Hz epoch as a receiver sends it (GGA, RMC, GSA, VTG): the lines the sources turn into Buffers. */
const EPOCH = [
  '$GNGGA,080000.00,5200.00000,N,00500.00000,E,1,09,0.80,3.2,M,47.0,M,,*5C',
  '$GNRMC,080000.00,A,5200.00000,N,00500.00000,E,24.3,87.5,221126,,,A,V*1E',
  '$GNGSA,A,3,02,05,07,09,13,15,18,20,30,,,,1.50,0.80,1.27,1*0A',
  '$GNVTG,87.5,T,,M,24.3,N,45.0,K,A*2F',
];

/**
 * A read-only card with the platform down for two hours at 10 Hz: the held fixes stay at the
 * bound, and what they keep alive must stay with them. The sources (replay-source.ts,
 * gpsd-source.ts) make a small Buffer of every line, from Node's shared 8 KiB pool; an event id
 * cut from that pool too kept its whole slab alive, so every fix held after thinning kept ~8 KiB
 * of other lines: ArrayBuffer memory outside the heap that grew with the outage (78 MB after a
 * 4-hour spell of bench:footprint) while the count of held fixes stayed flat.
 */
describe('fixes held through a read-only spell', () => {
  it('keep only their own event ids alive, not the Buffers recorded around them', { timeout: 120_000 }, async () => {
    const { logger } = captureLogger();
    const { db, outbox, clock } = await openOutbox(tempDir('ta-held-buffers-'), { logger });
    db.pragma('query_only = ON');
    const N = 72_000;
    let lineBytes = 0;
    for (let i = 0; i < N; i++) {
      // The receiver's lines of this epoch, as a source hands them on (and lets go of them).
      for (const line of EPOCH) lineBytes += Buffer.from(`${line}\n`, 'latin1').length;
      outbox.record(fixAt(i, { transition: false }));
      if (i % 10 === 9) {
        clock.advance(1000);
        outbox.flush();
      }
    }
    const s = outbox.status();
    expect(s.lastCommitError?.code).toMatch(/^SQLITE_(READONLY|IOERR)/);
    expect(s.thinned).toBeGreaterThan(0);
    const { rows: held } = outbox.takeHeld();
    expect(held.length).toBe(s.buffered);
    expect(held.length).toBeLessThanOrEqual(MAX_BUFFER_WHILE_FULL);
    // The memory outside the heap the held rows keep: each distinct ArrayBuffer behind an event id, whole.
    const stores = new Set(held.map((r) => r.event_id.buffer));
    const kept = [...stores].reduce((sum, b) => sum + b.byteLength, 0);
    const perRow = kept / held.length;
    process.stderr.write(
      `read-only 2 h at 10 Hz beside ${(lineBytes / 1e6).toFixed(1)} MB of line Buffers: ${held.length} fixes held keep ${stores.size} ArrayBuffers, ${(kept / 1e6).toFixed(2)} MB (${perRow.toFixed(0)} B a fix; the budget counts ${HELD_ROW_HEAP_BYTES} B a fix in all)\n`,
    );
    // Its own 16 bytes each (before: 8 KiB pool slabs, ~2,400 of them, ~650 B a held fix).
    expect(perRow).toBeLessThanOrEqual(32);
    db.close();
  });
});
