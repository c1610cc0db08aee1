import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../src/system/atomic-file.js';
import { tempDir } from '../helpers/tmp.js';

describe('writeFileAtomic', () => {
  it('replaces the content whole, 0600 by default, leaving no temp file', () => {
    const dir = tempDir();
    const file = path.join(dir, 'state.json');
    writeFileSync(file, 'old');
    writeFileAtomic(file, '{"new":true}');
    expect(readFileSync(file, 'utf8')).toBe('{"new":true}');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['state.json']);
  });

  it('honours an explicit mode and leaves the old file when the target directory is gone', () => {
    const dir = tempDir();
    const file = path.join(dir, 'public.txt');
    writeFileAtomic(file, 'x', { mode: 0o644 });
    expect(statSync(file).mode & 0o777).toBe(0o644);
    expect(() => writeFileAtomic(path.join(dir, 'missing', 'f'), 'y')).toThrow(/ENOENT/);
    expect(readdirSync(dir)).toEqual(['public.txt']);
  });
});
