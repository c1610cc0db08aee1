import { inspect } from 'node:util';

/** What every printout shows for a secret; the schema refuses it as a password (schema.ts). */
export const SECRET_MASK = '[redacted]';

export interface SecretOptions {
  /** Where the value comes from, for messages that tell a person what to fix ("the password file /etc/..."). Never the value. */
  origin?: string;
}

/**
 * A value that must never be printed: JSON, template strings and util.inspect all show a mask.
 * Only `reveal()` gives the value, and only the code that sends it (the token client) calls it.
 */
export class Secret {
  readonly #value: string | (() => string);
  readonly origin: string | undefined;
  /**
   * A value, or a function that reads it each time it is needed (a password file: installed later,
   * or corrected in place while the daemon runs; see password-source.ts).
   */
  constructor(value: string | (() => string), options: SecretOptions = {}) {
    this.#value = value;
    this.origin = options.origin;
  }
  reveal(): string {
    return typeof this.#value === 'function' ? this.#value() : this.#value;
  }
  /** True when reveal() reads its source anew each time, so a fix there needs no restart. */
  get rereads(): boolean {
    return typeof this.#value === 'function';
  }
  toString(): string {
    return SECRET_MASK;
  }
  toJSON(): string {
    return SECRET_MASK;
  }
  [inspect.custom](): string {
    return SECRET_MASK;
  }
}
