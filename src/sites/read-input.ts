import { readFile } from 'node:fs/promises';
import { AgentError } from '../errors.js';
import { jsonErrorOffset, lineAndColumn } from '../system/json-position.js';

/** Larger than any sensible batch of locations; protects against `location put /dev/zero`. */
export const MAX_INPUT_BYTES = 10 * 1024 * 1024;

/** Reads `FILE` (or stdin for `-`) and parses it as JSON, with a line and column on a syntax error. */
export async function readLocationInput(
  file: string,
  stdin: NodeJS.ReadableStream = process.stdin,
): Promise<{ value: unknown; name: string }> {
  const name = file === '-' ? 'standard input' : file;
  let text: string;
  try {
    text = file === '-' ? await readStream(stdin) : await readFile(file, 'utf8');
  } catch (e) {
    if (e instanceof AgentError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'it is a directory'
            : String(code ?? (e as Error).message);
    throw new AgentError('LOCATION_INPUT_UNREADABLE', `cannot read ${name}: ${why}`, { class: 'config', retryable: false });
  }
  if (Buffer.byteLength(text) > MAX_INPUT_BYTES)
    throw new AgentError('LOCATION_INPUT_TOO_LARGE', `${name} is larger than ${MAX_INPUT_BYTES / 1024 / 1024} MiB`, {
      class: 'config',
      retryable: false,
    });
  if (text.trim() === '')
    throw new AgentError('LOCATION_INPUT_EMPTY', `${name} is empty: expected one location object or a JSON array of them`, {
      class: 'config',
      retryable: false,
    });
  try {
    return { value: JSON.parse(text.replace(/^\uFEFF/, '')) as unknown, name };
  } catch (e) {
    throw new AgentError('LOCATION_INPUT_NOT_JSON', `${name} is not valid JSON: ${withLineColumn((e as Error).message, text)}`, {
      class: 'config',
      retryable: false,
    });
  }
}

/** "Unexpected token 'w' ..." -> the same, plus "(line 3, column 11)". */
function withLineColumn(message: string, text: string): string {
  const offset = jsonErrorOffset(text);
  if (offset === undefined) return message;
  const { line, column } = lineAndColumn(text, offset);
  return `${message.replace(/\s+/g, ' ')} (line ${line}, column ${column})`;
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += b.length;
    if (size > MAX_INPUT_BYTES)
      throw new AgentError('LOCATION_INPUT_TOO_LARGE', `standard input is larger than ${MAX_INPUT_BYTES / 1024 / 1024} MiB`, {
        class: 'config',
        retryable: false,
      });
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}
