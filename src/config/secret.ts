import { inspect } from 'node:util';

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
    return '[redacted]';
  }
  toJSON(): string {
    return '[redacted]';
  }
  [inspect.custom](): string {
    return '[redacted]';
  }
}
