import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import type { Config } from '../../src/config/load.js';
import { checkIgnition } from '../../src/doctor/ignition-check.js';
import { tempDir } from '../helpers/tmp.js';

/** The check reads only motion and ignition: the rest of the configuration as the schema defaults it. */
function config(ignition: unknown, enabled = true): Config {
  const parsed = configSchema.shape.ignition.parse(ignition);
  return { motion: configSchema.shape.motion.parse({ enabled }), ignition: parsed } as unknown as Config;
}

describe('doctor: the ignition input', () => {
  it('reads the value file and says the state; an unreadable one FAILs with the key; absent is SKIP "not wired"', async () => {
    const file = path.join(tempDir(), 'value');
    writeFileSync(file, '1\n');
    expect(await checkIgnition(config({ file, onAbove: 0 }))).toMatchObject({
      verdict: 'PASS',
      detail: expect.stringMatching(/reads 1: the ignition is on/),
    });
    writeFileSync(file, '0\n');
    expect((await checkIgnition(config({ file, onAbove: 0 }))).detail).toMatch(/ignition is off/);
    writeFileSync(file, 'x\n');
    expect(await checkIgnition(config({ file, onAbove: 0 }))).toMatchObject({
      verdict: 'FAIL',
      detail: expect.stringMatching(/ignition\.file .* not a number/),
    });
    expect(await checkIgnition(config({ file: path.join(path.dirname(file), 'missing'), onAbove: 0 }))).toMatchObject({ verdict: 'FAIL' });
    writeFileSync(file, '4000000\n');
    expect(await checkIgnition(config({ file, onAbove: 9000 }))).toMatchObject({ verdict: 'WARN', fix: expect.stringMatching(/onAbove/) });
    expect(await checkIgnition(config(undefined))).toMatchObject({ verdict: 'SKIP', detail: expect.stringMatching(/not wired/) });
  });

  it('config: a file without onAbove and a gpio line are refused naming the key and the fix', () => {
    const issues = (v: unknown) =>
      configSchema.shape.ignition.safeParse(v).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? [];
    expect(issues({ file: '/sys/class/gpio/gpio17/value' })).toEqual([expect.stringMatching(/^onAbove: is required with ignition.file/)]);
    expect(issues({ gpio: { line: 17 } })).toEqual([
      expect.stringMatching(/^gpio: is not read by this version yet: wire the ignition through ignition.file/),
    ]);
    expect(issues({})).toEqual([expect.stringMatching(/names no input/)]);
  });
});
