import type { Socket } from 'node:net';

/** A line past the reader's bound arrived (the socket is destroyed). */
export class LineTooLong extends Error {
  constructor(maxLine: number) {
    super(`a line longer than ${maxLine} bytes arrived`);
    this.name = 'LineTooLong';
  }
}

/**
 * Line reader over a socket for the small local JSON protocols: bounded line length, and a
 * `next()` that can time out, without a stream pipeline per line.
 */
export class LineSocket {
  readonly #socket: Socket;
  readonly #maxLine: number;
  readonly #queue: string[] = [];
  #buffer = '';
  #ended = false;
  #error: Error | undefined;
  #wake: (() => void) | undefined;

  constructor(socket: Socket, maxLine: number) {
    this.#socket = socket;
    this.#maxLine = maxLine;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.#onData(chunk));
    socket.on('end', () => this.#finish());
    socket.on('close', () => this.#finish());
    socket.on('error', (e) => {
      this.#error ??= e;
      this.#notify();
    });
  }

  /** The next line; undefined at the end of the stream or after `timeoutMs` (then `timedOut` is true). */
  async next(timeoutMs?: number): Promise<{ line?: string; timedOut: boolean }> {
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    try {
      while (this.#queue.length === 0) {
        if (this.#error) throw this.#error;
        if (this.#ended) return { timedOut: false };
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
          if (timeoutMs !== undefined && timer === undefined) {
            timer = setTimeout(() => {
              timedOut = true;
              resolve();
            }, timeoutMs);
          }
        });
        this.#wake = undefined;
        if (timedOut && this.#queue.length === 0) return { timedOut: true };
      }
      return { line: this.#queue.shift(), timedOut: false };
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  /** What arrived after the last complete line (an answer cut off before its newline). */
  get rest(): string {
    return this.#buffer;
  }

  write(text: string): void {
    this.#socket.write(text);
  }

  destroy(): void {
    this.#socket.destroy();
    this.#finish();
  }

  #onData(chunk: string): void {
    this.#buffer += chunk;
    let nl: number;
    while ((nl = this.#buffer.indexOf('\n')) >= 0) {
      const line = this.#buffer.slice(0, nl).replace(/\r$/, '');
      this.#buffer = this.#buffer.slice(nl + 1);
      if (line.trim() !== '') this.#queue.push(line);
    }
    if (this.#buffer.length > this.#maxLine) {
      this.#error ??= new LineTooLong(this.#maxLine);
      this.#socket.destroy();
    }
    this.#notify();
  }

  #finish(): void {
    this.#ended = true;
    this.#notify();
  }

  #notify(): void {
    this.#wake?.();
  }
}
