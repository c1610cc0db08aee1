import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSchemas } from '../../src/config/schema.js';
import type { Config } from '../../src/config/load.js';
import { checkIgnition } from '../../src/doctor/ignition-check.js';
import { fakeGpiod } from '../helpers/fake-gpiod.js';
import { tempDir } from '../helpers/tmp.js';

/** The check reads only motion and ignition: the rest of the configuration as the schema defaults it. */
function config(ignition: unknown, enabled = true): Config {
  const parsed = configSchemas().configSchema.shape.ignition.parse(ignition);
  return { motion: configSchemas().configSchema.shape.motion.parse({ enabled }), ignition: parsed } as unknown as Config;
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

  it('config: a file without onAbove, both inputs, or none are refused naming the key and the fix; a gpio line is taken with its defaults', () => {
    const issues = (v: unknown) =>
      configSchemas()
        .configSchema.shape.ignition.safeParse(v)
        .error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? [];
    expect(issues({ file: '/sys/class/gpio/gpio17/value' })).toEqual([expect.stringMatching(/^onAbove: is required with ignition.file/)]);
    expect(issues({ gpio: { line: 17 }, file: '/x', onAbove: 0 })).toEqual([
      expect.stringMatching(/^gpio: ignition.file and ignition.gpio are two inputs/),
    ]);
    expect(issues({})).toEqual([expect.stringMatching(/names no input/)]);
    expect(configSchemas().configSchema.shape.ignition.parse({ gpio: { line: 17 } })).toMatchObject({
      gpio: { chip: 'gpiochip0', line: 17, activeLow: false },
      debounceS: 2,
    });
  });

  it('ignition.gpio: the line read through gpioget, its state; a missing tool, chip or a line held by the running agent said as such', async () => {
    const gpiod = fakeGpiod(1);
    const gpio = (activeLow = false) => config({ gpio: { chip: 'gpiochip0', line: 17, activeLow } });
    expect(await checkIgnition(gpio(), { gpiodTools: gpiod.tools })).toMatchObject({
      verdict: 'PASS',
      detail: 'ignition.gpio gpiochip0 line 17 reads 1 through gpioget: the ignition is on',
    });
    expect((await checkIgnition(gpio(true), { gpiodTools: gpiod.tools })).detail).toMatch(/\(active low\) reads 0 .*ignition is off/);
    gpiod.failWith('gpioget', "gpioget: cannot find GPIO chip character device 'gpiochip0'\n");
    expect(await checkIgnition(gpio(), { gpiodTools: gpiod.tools })).toMatchObject({
      verdict: 'FAIL',
      detail: expect.stringMatching(/cannot be read: GPIO chip gpiochip0 not found/),
      fix: expect.stringMatching(/gpiodetect/),
    });
    gpiod.failWith('gpioget', 'gpioget: unable to request lines: Device or resource busy\n');
    expect(await checkIgnition(gpio(), { gpiodTools: gpiod.tools })).toMatchObject({
      verdict: 'WARN',
      fix: expect.stringMatching(/the running agent holds the line/),
    });
    const missing = { gpioget: path.join(gpiod.dir, 'none'), gpiomon: path.join(gpiod.dir, 'none') };
    expect(await checkIgnition(gpio(), { gpiodTools: missing })).toMatchObject({
      verdict: 'FAIL',
      detail: expect.stringMatching(/gpioget not found: ignition.gpio needs Debian's gpiod package/),
    });
  });
});
