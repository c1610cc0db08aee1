/**
 * HPACK's tables (RFC 7541 section 2.3): the static table of Appendix A and a dynamic table with
 * the size accounting of section 4.1 (name + value octets + 32 per entry, oldest evicted first).
 */

// prettier-ignore
export const STATIC_TABLE: readonly (readonly [string, string])[] = [
  [':authority', ''], [':method', 'GET'], [':method', 'POST'], [':path', '/'], [':path', '/index.html'],
  [':scheme', 'http'], [':scheme', 'https'], [':status', '200'], [':status', '204'], [':status', '206'],
  [':status', '304'], [':status', '400'], [':status', '404'], [':status', '500'], ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'], ['accept-language', ''], ['accept-ranges', ''], ['accept', ''],
  ['access-control-allow-origin', ''], ['age', ''], ['allow', ''], ['authorization', ''], ['cache-control', ''],
  ['content-disposition', ''], ['content-encoding', ''], ['content-language', ''], ['content-length', ''],
  ['content-location', ''], ['content-range', ''], ['content-type', ''], ['cookie', ''], ['date', ''],
  ['etag', ''], ['expect', ''], ['expires', ''], ['from', ''], ['host', ''], ['if-match', ''],
  ['if-modified-since', ''], ['if-none-match', ''], ['if-range', ''], ['if-unmodified-since', ''],
  ['last-modified', ''], ['link', ''], ['location', ''], ['max-forwards', ''], ['proxy-authenticate', ''],
  ['proxy-authorization', ''], ['range', ''], ['referer', ''], ['refresh', ''], ['retry-after', ''],
  ['server', ''], ['set-cookie', ''], ['strict-transport-security', ''], ['transfer-encoding', ''],
  ['user-agent', ''], ['vary', ''], ['via', ''], ['www-authenticate', ''],
];

/**
 * Size of an entry (RFC 7541 4.1): octets of name and value plus 32. Names and values are held as
 * latin1 strings, one character per octet, so that any octet survives a decode and re-encode.
 */
export function entrySize(name: string, value: string): number {
  return name.length + value.length + 32;
}

interface Entry {
  name: string;
  value: string;
  size: number;
}

/** The dynamic table; index 1 is the newest entry (address space after the static table's 61). */
export class DynamicTable {
  /** Newest last (pushed), so that eviction shifts from the front. */
  readonly #entries: Entry[] = [];
  #size = 0;
  #max: number;

  constructor(maxSize = 4096) {
    this.#max = maxSize;
  }

  get size(): number {
    return this.#size;
  }

  get maxSize(): number {
    return this.#max;
  }

  get length(): number {
    return this.#entries.length;
  }

  setMaxSize(max: number): void {
    this.#max = max;
    this.#evict(0);
  }

  /** Adds an entry, evicting the oldest first; an entry larger than the table empties it (4.4). */
  add(name: string, value: string): void {
    const size = entrySize(name, value);
    this.#evict(size);
    if (size <= this.#max) {
      this.#entries.push({ name, value, size });
      this.#size += size;
    }
  }

  /** The entry at dynamic index `i` (1 = newest), or undefined. */
  at(i: number): readonly [string, string] | undefined {
    const e = this.#entries[this.#entries.length - i];
    return e && i >= 1 ? [e.name, e.value] : undefined;
  }

  /** Dynamic index (1 = newest) of an exact match, and of the newest entry with that name. */
  find(name: string, value: string): { exact?: number; name?: number } {
    let byName: number | undefined;
    for (let k = this.#entries.length - 1; k >= 0; k--) {
      const e = this.#entries[k]!;
      if (e.name !== name) continue;
      const i = this.#entries.length - k;
      if (e.value === value) return { exact: i, name: i };
      byName ??= i;
    }
    return byName === undefined ? {} : { name: byName };
  }

  #evict(room: number): void {
    while (this.#entries.length > 0 && this.#size + room > this.#max) this.#size -= this.#entries.shift()!.size;
  }
}

/** Exact and name-only matches in the static table (first occurrence), built once. */
export const STATIC_EXACT = new Map<string, number>();
export const STATIC_NAME = new Map<string, number>();
STATIC_TABLE.forEach(([name, value], k) => {
  if (!STATIC_EXACT.has(`${name}\0${value}`)) STATIC_EXACT.set(`${name}\0${value}`, k + 1);
  if (!STATIC_NAME.has(name)) STATIC_NAME.set(name, k + 1);
});
