import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { configSchemas } from '../../src/config/schema.js';
import type { Config } from '../../src/config/load.js';
import { checkIgnition } from '../../src/doctor/ignition-check.js';
import { fakeGpiod } from '../helpers/fake-gpiod.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';

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
      detail: 'ignition.gpio gpiochip0 line 17 reads 1 through gpioget and gpiomon watches it: the ignition is on',
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

  it('a FIFO as ignition.file: FAIL at once naming the type and the fix, where doctor hung', async () => {
    const fifo = path.join(tempDir(), 'ignition');
    execFileSync('mkfifo', [fifo]);
    // Should a read still block on it, a writer's open ends it.
    onTestFinished(() => {
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // ENXIO: nothing waits on it.
      }
    });
    const started = performance.now();
    expect(await promptly(checkIgnition(config({ file: fifo, onAbove: 0 })), 2000)).toEqual({
      name: 'ignition',
      verdict: 'FAIL',
      detail: `ignition.file ${fifo} is a FIFO (named pipe), not a value file`,
      fix: 'ignition.file must be a value file such as /sys/class/gpio/gpioN/value, a hwmon inN_input or an IIO in_voltageN_raw',
    });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it("ignition.gpio: gpiomon run as the daemon runs it; missing, or refusing libgpiod v2's options, is a FAIL naming gpiod 2.x", async () => {
    const gpiod = fakeGpiod(1);
    const gpio = config({ gpio: { chip: 'gpiochip0', line: 17 } });
    const noGpiomon = { gpioget: gpiod.tools.gpioget, gpiomon: path.join(gpiod.dir, 'none') };
    expect(await promptly(checkIgnition(gpio, { gpiodTools: noGpiomon }), 5000)).toMatchObject({
      verdict: 'FAIL',
      detail: expect.stringMatching(/reads 1 through gpioget, but gpiomon, which the agent runs to watch it, fails: gpiomon not found/),
      fix: expect.stringMatching(/install gpiod 2\.x/),
    });
    gpiod.failWith('gpiomon', "gpiomon: unrecognized option '--banner'\ngpiomon: try gpiomon --help\n");
    expect(await promptly(checkIgnition(gpio, { gpiodTools: gpiod.tools }), 5000)).toMatchObject({
      verdict: 'FAIL',
      detail: expect.stringMatching(/gpiomon does not take libgpiod v2's options/),
      fix: expect.stringMatching(/install gpiod 2\.x/),
    });
    // A gpiomon that starts and holds the line is ended as soon as its banner says so.
    gpiod.failWith('gpiomon', undefined);
    expect(await promptly(checkIgnition(gpio, { gpiodTools: gpiod.tools }), 5000)).toMatchObject({ verdict: 'PASS' });
    const [pid] = gpiod.gpiomonPids();
    await waitFor('the probe gpiomon to end', () => !alive(pid!));
  });
});

/** The promise's value, or a failure naming the hang once `ms` have passed. */
async function promptly<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms: the check hangs`)), ms);
  });
  try {
    return await Promise.race([p, hung]);
  } finally {
    clearTimeout(timer);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
