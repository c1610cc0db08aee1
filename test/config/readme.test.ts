import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { REPO_ROOT } from '../helpers/paths.js';

/** Every leaf key of the schema, as a dotted path (records such as device.attributes are leaves). */
function leafKeys(node: unknown, prefix = ''): string[] {
  let n: unknown = node;
  for (let i = 0; i < 8 && n && !(n as { shape?: unknown }).shape; i++) {
    const inner = (n as { _zod?: { def?: { innerType?: unknown } } })._zod?.def?.innerType;
    if (!inner) break;
    n = inner;
  }
  const shape = (n as { shape?: Record<string, unknown> } | undefined)?.shape;
  if (!shape) return [prefix];
  return Object.entries(shape).flatMap(([k, v]) => leafKeys(v, prefix ? `${prefix}.${k}` : k));
}

describe('README configuration table', () => {
  it('documents every configuration key of the schema, and no key that does not exist', () => {
    const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const documented = [...readme.matchAll(/^\| `([a-zA-Z.]+)` \|/gm)].map((m) => m[1]);
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
