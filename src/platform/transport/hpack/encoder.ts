/**
 * An HPACK encoder (RFC 7541) whose indexing is the caller's choice per field, for the header
 * indexer (../h2-header-indexer.ts): fields the caller lets it index go into the dynamic table and
 * cost an octet or two when they come again; never-indexed fields stay never-indexed literals
 * (section 6.2.3), also towards any intermediary that re-encodes them.
 */
import { Writer } from './codec.js';
import { DynamicTable, entrySize, STATIC_EXACT, STATIC_NAME, STATIC_TABLE } from './table.js';

export interface EncoderField {
  name: string;
  value: string;
  /** 'index': add to the table (when it fits); 'literal': literal without indexing; 'never': never-indexed literal. */
  indexing: 'index' | 'literal' | 'never';
}

export class HpackEncoder {
  readonly table: DynamicTable;
  /** Table sizes to announce at the start of the next block (section 4.2: the smallest, then the last). */
  #pending: number[] = [];

  constructor(maxTableSize = 4096) {
    this.table = new DynamicTable(maxTableSize);
  }

  /** The decoder allows at most `size` now (its SETTINGS_HEADER_TABLE_SIZE, acknowledged). */
  setMaxTableSize(size: number): void {
    if (size === this.table.maxSize && this.#pending.length === 0) return;
    this.#pending.push(size);
    this.table.setMaxSize(size);
  }

  encode(fields: readonly EncoderField[]): Buffer {
    const w = new Writer();
    if (this.#pending.length > 0) {
      const smallest = Math.min(...this.#pending);
      const last = this.#pending.at(-1)!;
      w.int(smallest, 5, 0x20);
      if (last !== smallest) w.int(last, 5, 0x20);
      this.#pending = [];
    }
    for (const f of fields) this.#field(w, f);
    return w.toBuffer();
  }

  #field(w: Writer, f: EncoderField): void {
    const dynamic = this.table.find(f.name, f.value);
    const exact =
      STATIC_EXACT.get(`${f.name}\0${f.value}`) ?? (dynamic.exact !== undefined ? dynamic.exact + STATIC_TABLE.length : undefined);
    if (exact !== undefined && f.indexing !== 'never') {
      w.int(exact, 7, 0x80);
      return;
    }
    const nameIndex = STATIC_NAME.get(f.name) ?? (dynamic.name !== undefined ? dynamic.name + STATIC_TABLE.length : 0);
    // An entry larger than the table would only empty it (section 4.4): send it as a plain literal.
    const index = f.indexing === 'index' && entrySize(f.name, f.value) <= this.table.maxSize;
    if (index) w.int(nameIndex, 6, 0x40);
    else w.int(nameIndex, 4, f.indexing === 'never' ? 0x10 : 0x00);
    if (nameIndex === 0) w.string(f.name);
    w.string(f.value);
    if (index) this.table.add(f.name, f.value);
  }
}
