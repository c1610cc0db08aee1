import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BACKLOG_RATE_PER_S, configSchema } from '../../src/config/schema.js';
import { leafKeys } from '../../src/config/schema-keys.js';
import { REPO_ROOT } from '../helpers/paths.js';

describe('README configuration table', () => {
  it('shows the schema default of upload.backlogRatePerS (chosen from bench:fleet)', () => {
    const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const row = readme.match(/^\| `upload\.backlogRatePerS` \| `([^`]+)` \|/m);
    expect(row?.[1]).toBe(String(BACKLOG_RATE_PER_S));
    expect(configSchema.shape.upload.parse({}).backlogRatePerS).toBe(BACKLOG_RATE_PER_S);
  });

  it('documents every configuration key of the schema, and no key that does not exist', () => {
    const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const documented = [...readme.matchAll(/^\| `([a-zA-Z0-9.]+)` \|/gm)].map((m) => m[1]);
    const keys = leafKeys(configSchema);
    expect(keys.length).toBeGreaterThan(30);
    expect(
      keys.filter((k) => !documented.includes(k)),
      'keys missing from the README table',
    ).toEqual([]);
    expect(
      documented.filter((k) => !keys.includes(k as string)),
      'README keys the schema does not know',
    ).toEqual([]);
  });
});
