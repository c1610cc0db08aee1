import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_DEFAULTS } from '../../src/config/defaults.js';
import { configSchemas } from '../../src/config/schema.js';
import { leafKeys } from '../../src/config/schema-keys.js';
import { REPO_ROOT } from '../helpers/paths.js';

describe('README configuration table', () => {
  it('shows the schema defaults of the drain (chosen from bench:drain)', () => {
    const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const row = (key: string) => readme.match(new RegExp(`^\\| \`upload\\.${key}\` \\| \`([^\`]+)\` \\|`, 'm'))?.[1];
    expect(row('latencyTargetMs')).toBe(String(CONFIG_DEFAULTS.upload.latencyTargetMs));
    expect(row('concurrency')).toBe(String(CONFIG_DEFAULTS.upload.concurrency));
    const defaults = configSchemas().configSchema.shape.upload.parse({});
    expect(defaults.latencyTargetMs).toBe(CONFIG_DEFAULTS.upload.latencyTargetMs);
    expect(defaults.concurrency).toBe(CONFIG_DEFAULTS.upload.concurrency);
    expect(defaults.backlogMaxRatePerS).toBeUndefined();
  });

  it('documents every configuration key of the schema, and no key that does not exist', () => {
    const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const documented = [...readme.matchAll(/^\| `([a-zA-Z0-9.]+)` \|/gm)].map((m) => m[1]);
    const keys = leafKeys(configSchemas().configSchema);
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
