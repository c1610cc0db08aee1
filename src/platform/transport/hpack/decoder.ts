/**
 * An HPACK decoder (RFC 7541 sections 3 and 6): header blocks to fields, keeping the dynamic table
 * the encoder of those blocks keeps, and telling how each field was represented (a never-indexed
 * literal must stay one when the field is passed on, section 6.2.3).
 */
import { HpackError, Reader } from './codec.js';
import { DynamicTable, STATIC_TABLE } from './table.js';

export type FieldRepresentation = 'indexed' | 'incremental' | 'without' | 'never';

export interface HeaderField {
  /** latin1, one character per octet. */
  name: string;
  value: string;
  representation: FieldRepresentation;
}

export class HpackDecoder {
  readonly table: DynamicTable;
  /** The largest table size an update may announce (the decoder side's SETTINGS_HEADER_TABLE_SIZE). */
  #limit: number;

  constructor(options: { maxTableSize?: number; limit?: number } = {}) {
    this.table = new DynamicTable(options.maxTableSize ?? 4096);
    this.#limit = options.limit ?? 4096;
  }

  setLimit(limit: number): void {
    this.#limit = limit;
  }

  /** One complete header block (HEADERS and its CONTINUATIONs joined, padding removed). */
  decode(block: Buffer): HeaderField[] {
    const r = new Reader(block);
    const fields: HeaderField[] = [];
    while (!r.done) {
      const b = r.peek();
      if (b & 0x80) {
        const [name, value] = this.#entry(r.int(7));
        fields.push({ name, value, representation: 'indexed' });
      } else if (b & 0x40) {
        const field = this.#literal(r, 6, 'incremental');
        this.table.add(field.name, field.value);
        fields.push(field);
      } else if (b & 0x20) {
        // A size update is only allowed before the first field of a block (section 4.2).
        if (fields.length > 0) throw new HpackError('dynamic table size update after a field');
        const size = r.int(5);
        if (size > this.#limit) throw new HpackError(`table size update to ${size} above the limit ${this.#limit}`);
        this.table.setMaxSize(size);
      } else fields.push(this.#literal(r, 4, b & 0x10 ? 'never' : 'without'));
    }
    return fields;
  }

  #literal(r: Reader, prefixBits: number, representation: FieldRepresentation): HeaderField {
    const index = r.int(prefixBits);
    const name = index === 0 ? r.string() : this.#entry(index)[0];
    return { name, value: r.string(), representation };
  }

  #entry(index: number): readonly [string, string] {
    if (index === 0) throw new HpackError('index 0');
    const e = index <= STATIC_TABLE.length ? STATIC_TABLE[index - 1] : this.table.at(index - STATIC_TABLE.length);
    if (!e) throw new HpackError(`index ${index} outside the tables`);
    return e;
  }
}
