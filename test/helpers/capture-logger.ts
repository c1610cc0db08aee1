import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/log.js';

/** The project's logger writing into a string, for tests that check what reaches the log. */
export function captureLogger(level: 'trace' | 'debug' = 'debug'): { logger: Logger; text: () => string } {
  let text = '';
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text += chunk.toString();
      callback();
    },
  });
  return { logger: createLogger({ destination, level }), text: () => text };
}
