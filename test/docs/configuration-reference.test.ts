import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configSchemas } from '../../src/config/schema.js';
import { leafKeys } from '../../src/config/schema-keys.js';
import { configurationReference, REFERENCE_PATH } from '../../tools/config-reference.js';

/**
 * docs/configuration.md is made from the schema's describe() texts by `npm run docs:config`: a
 * schema change without the regenerated file fails here, with the command that fixes it.
 */
describe('docs/configuration.md', () => {
  it('is what npm run docs:config makes from the schema now', () => {
    const made = configurationReference();
    const stored = readFileSync(REFERENCE_PATH, 'utf8');
    expect(stored === made, 'docs/configuration.md is stale: run npm run docs:config and commit it').toBe(true);
  });

  it('has one row per configuration key', () => {
    const rows = [...configurationReference().matchAll(/^\| `([a-zA-Z0-9.]+)` \|/gm)].map((m) => m[1]);
    expect(rows.sort()).toEqual(leafKeys(configSchemas().configSchema).sort());
  });
});
