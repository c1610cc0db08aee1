import { describe, expect, it } from 'vitest';
import { CONFIG_DEFAULTS } from '../../src/config/defaults.js';
import { configSchemas } from '../../src/config/schema.js';
import { defaultAt, leafKeys } from '../../src/config/schema-keys.js';
import { MOVEMENT_DEFAULTS } from '../../src/motion/movement.js';

/** Every leaf of the defaults table, as dotted key -> value. */
function tableLeaves(node: object, prefix = ''): [string, unknown][] {
  return Object.entries(node).flatMap(([k, v]): [string, unknown][] => {
    const key = prefix ? `${prefix}.${k}` : k;
    return typeof v === 'object' && v !== null ? tableLeaves(v as object, key) : [[key, v]];
  });
}

describe('the defaults table (src/config/defaults.ts)', () => {
  const schemaDefaults = leafKeys(configSchemas().configSchema)
    .map((k): [string, unknown] => [k, defaultAt(k.split('.'))])
    .filter(([, v]) => v !== undefined);

  it('holds every default the schemas give, with the same value, and nothing else', () => {
    expect(schemaDefaults.length).toBeGreaterThan(40);
    expect(Object.fromEntries(tableLeaves(CONFIG_DEFAULTS))).toEqual(Object.fromEntries(schemaDefaults));
  });

  it('is what the trips detector starts from, and cannot be changed by a module', () => {
    expect(MOVEMENT_DEFAULTS.stopAfterS).toBe(CONFIG_DEFAULTS.motion.stopAfterS);
    expect(MOVEMENT_DEFAULTS.departRadiusM).toBe(CONFIG_DEFAULTS.motion.departRadiusM);
    expect(MOVEMENT_DEFAULTS.stillSpeedKmh).toBe(CONFIG_DEFAULTS.recording.stoppedSpeedKmh);
    expect(Object.isFrozen(CONFIG_DEFAULTS.recording)).toBe(true);
    expect(Object.isFrozen(CONFIG_DEFAULTS.ignition.gpio)).toBe(true);
  });
});
