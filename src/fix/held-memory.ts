/**
 * What the fixes held in memory may cost (a read-only or full card, a restart of the store): a
 * budget in bytes of heap, so that holding adds at most about 32 MB to the daemon's RSS (the
 * collector's headroom makes RSS about twice the live heap). Beyond it what is held is thinned.
 */
export const MAX_HELD_HEAP_BYTES = 12 * 1024 * 1024;

/**
 * Heap and backing store one held outbox row takes: 347 B measured on Node 20 x64 (an object of
 * 11 fields and a 16-byte Buffer of its own, event-id.ts; 304 B counted when the id was cut from
 * Node's Buffer pool, whose 8 KiB slab it kept alive uncounted: held-buffers.test.ts);
 * test/store/outbox/held-memory.test.ts fails if it grows past this.
 */
export const HELD_ROW_HEAP_BYTES = 384;

/** Heap one recorded fix waiting in the store queue while no outbox is attached takes: ~700 B measured (a RecordedFix of every field). */
export const WAITING_FIX_HEAP_BYTES = 768;
