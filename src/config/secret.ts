import { inspect } from 'node:util';

/**
 * A value that must never be printed: JSON, template strings and util.inspect all show a mask.
 * Only `reveal()` gives the value, and only the code that sends it (the token client) calls it.
 */
export class Secret {
  readonly #value: string | (() => string);
  /** A value, or a function that reads it when needed (e.g. a password file installed later). */
  constructor(value: string | (() => string)) {
    this.#value = value;
  }
  reveal(): string {
    return typeof this.#value === 'function' ? this.#value() : this.#value;
  }
  toString(): string {
    return '[redacted]';
  }
  toJSON(): string {
    return '[redacted]';
  }
  [inspect.custom](): string {
    return '[redacted]';
  }
}
