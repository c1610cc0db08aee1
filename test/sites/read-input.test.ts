import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonErrorOffset, lineAndColumn } from '../../src/system/json-position.js';
import { readLocationInput } from '../../src/sites/read-input.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'ta-loc-in-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('jsonErrorOffset agrees with JSON.parse and says where', () => {
  it.each(['{}', '[]', ' {"a": [1, -2.5e3, true, false, null, "x\\"y\\u00e9"]}\n', '"just a string"', '0'])('valid: %s', (text) => {
    expect(() => JSON.parse(text)).not.toThrow();
    expect(jsonErrorOffset(text)).toBeUndefined();
  });

  it.each([
    ['{\n  "name": "x",\n  "type": warehouse\n}', 3, 11],
    ['{"a": 1,}', 1, 9],
    ['[1, 2', 1, 6],
    ["{'a': 1}", 1, 2],
    ['{"a": 01}', 1, 8],
    ['{"a": "tab\there"}', 1, 11],
    ['{"a": 1} x', 1, 10],
    ['', 1, 1],
  ])('invalid: %j at line %i, column %i', (text, line, column) => {
    expect(() => JSON.parse(text)).toThrow();
    const at = jsonErrorOffset(text);
    expect(at).toBeDefined();
    expect(lineAndColumn(text, at as number)).toEqual({ line, column });
  });
});

describe('readLocationInput', () => {
  it('reads a file, or standard input for -', async () => {
    const file = path.join(dir, 'a.json');
    writeFileSync(file, '\uFEFF{"name": "x"}');
    expect(await readLocationInput(file)).toEqual({ value: { name: 'x' }, name: file });
    expect(await readLocationInput('-', Readable.from([Buffer.from('[1,'), Buffer.from('2]')]))).toEqual({
      value: [1, 2],
      name: 'standard input',
    });
  });

  it.each([
    ['missing', (f: string) => f, 'LOCATION_INPUT_UNREADABLE', /cannot read .*missing\.json: no such file/],
    [
      'empty',
      (f: string) => (writeFileSync(f, ' \n'), f),
      'LOCATION_INPUT_EMPTY',
      /is empty: expected one location object or a JSON array of them/,
    ],
    ['a directory', () => dir, 'LOCATION_INPUT_UNREADABLE', /it is a directory/],
  ])('%s: a clear config error', async (name, prepare, code, message) => {
    const file = prepare(path.join(dir, `${name}.json`));
    const e = (await readLocationInput(file).catch((err: unknown) => err)) as { code: string; message: string; errorClass: string };
    expect(e.code).toBe(code);
    expect(e.message).toMatch(message);
    expect(e.errorClass).toBe('config');
  });
});
