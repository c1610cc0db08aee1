import { describe, expect, it } from 'vitest';
import {
  EVENT_ID_NAMESPACE,
  eventIdBytes,
  eventIdName,
  formatUuid,
  parseUuid,
  uuidV5,
  vehicleEventIdBytes,
} from '../../src/store/event-id.js';

const NAMESPACE_DNS = '6ba7b810-9dad-11d1-80b4-00c04fd430c8';

describe('UUID v5 event ids', () => {
  it('matches the RFC 9562 test vector (appendix A.4)', () => {
    expect(uuidV5('www.example.com', NAMESPACE_DNS)).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  it('sets version 5 and the RFC variant', () => {
    const id = formatUuid(eventIdBytes('sys', 'dev', 1_700_000_000_123));
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(EVENT_ID_NAMESPACE).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5/);
  });

  it('is the same for the same device and fix time, different otherwise', () => {
    const a = formatUuid(eventIdBytes('sys', 'dev', 1000));
    expect(formatUuid(eventIdBytes('sys', 'dev', 1000))).toBe(a);
    expect(formatUuid(eventIdBytes('sys', 'dev', 1001))).not.toBe(a);
    expect(formatUuid(eventIdBytes('sys', 'dev2', 1000))).not.toBe(a);
    expect(formatUuid(eventIdBytes('sys2', 'dev', 1000))).not.toBe(a);
  });

  it('cannot be confused by separators inside the identifiers', () => {
    expect(eventIdName('a|1:b', 'c', 5)).not.toBe(eventIdName('a', '1:b|c', 5));
    expect(formatUuid(eventIdBytes('a|1:b', 'c', 5))).not.toBe(formatUuid(eventIdBytes('a', '1:b|c', 5)));
  });

  it('round-trips through bytes and rejects what is not a UUID', () => {
    const id = uuidV5('x', NAMESPACE_DNS);
    expect(formatUuid(parseUuid(id))).toBe(id);
    expect(() => parseUuid('not-a-uuid')).toThrow(RangeError);
  });

  it("owns its 16 bytes: not a slice of Node's shared Buffer pool, which a held id would keep alive whole", () => {
    // What held fixes keep through a long read-only spell: test/store/outbox/held-buffers.test.ts.
    for (const id of [eventIdBytes('sys', 'dev', 1000), vehicleEventIdBytes('sys', 'dev', 'startMovingEvent', 1000)]) {
      expect(id.byteLength).toBe(16);
      expect(id.buffer.byteLength).toBe(16);
    }
  });
});
