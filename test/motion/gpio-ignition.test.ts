import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Config } from '../../src/config/load.js';
import { configSchemas } from '../../src/config/schema.js';
import { silentLogger, type Logger } from '../../src/log.js';
import { buildMotion } from '../../src/motion/agent-motion.js';
import { GpioIgnitionInput } from '../../src/motion/gpio-ignition.js';
import { explainGpiodFailure, readGpioLine, type GpiodTools } from '../../src/motion/gpiod-tools.js';
import { ManualClock, systemClock, systemTimers } from '../../src/system/clock.js';
import { captureLogger } from '../helpers/capture-logger.js';
import { fakeGpiod } from '../helpers/fake-gpiod.js';
import { waitFor } from '../helpers/wait.js';
import { assessHealth } from '../../src/status/health.js';
import { liveSnapshot } from '../status/fixtures.js';

/** The input on a manual clock (debounce and backoff), its tools real child processes. */
async function rig(o: { level: 0 | 1; activeLow?: boolean; logger?: Logger; start?: boolean }) {
  const gpiod = fakeGpiod(o.level);
  const clock = new ManualClock();
  const changes: { on: boolean; monoMs: number }[] = [];
  const input = new GpioIgnitionInput({
    chip: 'gpiochip0',
    line: 17,
    activeLow: o.activeLow ?? false,
    debounceS: 2,
    clock,
    timers: clock,
    logger: o.logger ?? silentLogger(),
    tools: gpiod.tools,
    backoff: { minMs: 1000, maxMs: 4000 },
    random: () => 0.5,
    onChange: (on, monoMs) => changes.push({ on, monoMs }),
  });
  onTestFinished(() => input.stop());
  if (o.start !== false) await input.start();
  /** Sets the line's level and waits until gpiomon has reported the edge. */
  const edge = async (level: 0 | 1): Promise<void> => {
    const before = input.edges;
    gpiod.setLevel(level);
    await waitFor('the edge from gpiomon', () => input.edges > before);
  };
  return { gpiod, clock, changes, input, edge };
}

/** The motion tracker the daemon builds from ignition.gpio (line 17), on these tools, started. */
async function startedTracker(gpiodTools: GpiodTools) {
  const config = {
    motion: configSchemas().configSchema.shape.motion.parse({}),
    ignition: configSchemas().configSchema.shape.ignition.parse({ gpio: { line: 17 } }),
    recording: { stoppedSpeedKmh: 2 },
  } as unknown as Config;
  const tracker = buildMotion({ config, logger: silentLogger(), clock: systemClock, lastEpoch: () => undefined, gpiodTools })!;
  onTestFinished(() => tracker.stop());
  await tracker.start();
  return tracker;
}

describe('ignition from a GPIO line (gpiod tools as children)', () => {
  it('the state at start from gpioget, then edges: a cranking dip is no change, a stop held 2 s is one, dated at its edge; stop ends gpiomon', async () => {
    const r = await rig({ level: 1 });
    expect(r.changes).toEqual([{ on: true, monoMs: 0 }]);
    await waitFor('gpiomon holding the line', () => r.input.watching);
    r.clock.advance(1000);
    await r.edge(0); // cranking: the input drops for 0.6 s
    r.clock.advance(600);
    await r.edge(1);
    r.clock.advance(3000);
    expect(r.changes).toHaveLength(1);
    await r.edge(0);
    const offAt = r.clock.monotonicMs();
    r.clock.advance(1999);
    expect(r.changes).toHaveLength(1);
    r.clock.advance(1);
    expect(r.changes[1]).toEqual({ on: false, monoMs: offAt });
    const [pid] = r.gpiod.gpiomonPids();
    r.input.stop();
    await waitFor('gpiomon to end', () => !alive(pid!));
  });

  it('activeLow: a line at 0 is the ignition on, its rise is the engine stopping', async () => {
    const r = await rig({ level: 0, activeLow: true });
    expect(r.changes).toEqual([{ on: true, monoMs: 0 }]);
    await waitFor('gpiomon holding the line', () => r.input.watching);
    await r.edge(1);
    r.clock.advance(2000);
    expect(r.changes.map((c) => c.on)).toEqual([true, false]);
  });

  it('a gpiomon that ends is started again after the backoff, said in one line, and a change made while it was down is read then', async () => {
    const log = captureLogger();
    const r = await rig({ level: 1, logger: log.logger });
    await waitFor('gpiomon holding the line', () => r.input.watching);
    const [first] = r.gpiod.gpiomonPids();
    r.gpiod.setLevel(0);
    process.kill(first!, 'SIGKILL');
    await waitFor('the failure logged', () => /ignition gpio input failed/.test(log.text()));
    expect(log.text()).toMatch(/gpiomon was killed by SIGKILL/);
    r.clock.advance(1000); // the first backoff step, equal jitter at 0.5: 750 ms
    await waitFor('gpiomon started again', () => r.gpiod.gpiomonPids().length === 2 && r.input.watching);
    r.clock.advance(2000);
    expect(r.changes.map((c) => c.on)).toEqual([true, false]);
    // The first start's line, then the restart's one: its failure, "retrying", which worked.
    expect(
      log
        .text()
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { msg: string }).msg),
    ).toEqual(['ignition gpio line watched (gpiomon)', 'ignition gpio input failed: engine state kept, retrying']);
  });

  it('a gpiomon that ends every 62 s: one line a restart, and past 3 in 10 min the input is unstable naming it (status DEGRADED)', async () => {
    const log = captureLogger();
    const r = await rig({ level: 1, logger: log.logger });
    await waitFor('gpiomon holding the line', () => r.input.watching);
    for (let i = 1; i <= 4; i++) {
      r.clock.advance(62_000);
      const [pid] = r.gpiod.gpiomonPids().slice(-1);
      process.kill(pid!, 'SIGTERM'); // the fake exits 0 on it, as a gpiomon that ends on its own
      // Its end seen first: another timer pending on the clock would otherwise pass for the restart's.
      await waitFor('the restart scheduled', () => !r.input.watching && r.clock.nextTimerAt() !== undefined);
      r.clock.advance(r.clock.nextTimerAt()! - r.clock.monotonicMs());
      await waitFor('gpiomon started again', () => r.gpiod.gpiomonPids().length === i + 1 && r.input.watching);
      expect(r.input.unstable()).toBe(
        i <= 3
          ? undefined
          : 'ignition input unstable: gpiomon ended 4 times in the last 10 min (last: gpiomon exited with code 0); edges are missed while it restarts',
      );
    }
    expect(r.input.fault()).toBeUndefined();
    expect(log.text().trim().split('\n')).toHaveLength(1 + 4);
    const health = assessHealth({
      ...liveSnapshot(Date.now(), '/var/lib/telematics-agent'),
      motion: { state: 'stopped', odometerM: 0, ignition: 'on', ignitionUnstable: r.input.unstable()! },
    });
    expect(health.level).toBe('degraded');
    expect(health.reasons).toContain(r.input.unstable());
    // Ten quiet minutes later it is restarted now and then again.
    r.clock.advance(10 * 60_000);
    expect(r.input.unstable()).toBeUndefined();
  });

  it('a flapping line: at most 6 engine changes a minute, one line for it, and status says unstable; a 10 Hz wire the debounce hides is unstable too', async () => {
    const log = captureLogger();
    const r = await rig({ level: 1, logger: log.logger });
    await waitFor('gpiomon holding the line', () => r.input.watching);
    for (let i = 0; i < 24; i++) {
      await r.edge(i % 2 === 0 ? 0 : 1);
      r.clock.advance(2500);
    }
    expect(r.changes).toHaveLength(1 + 6); // 24 before the floor
    expect(r.input.unstable()).toMatch(/^ignition input unstable: \d+ changes in a minute \(a loose wire\?\); engine events held/);
    expect(
      log
        .text()
        .split('\n')
        .filter((l) => l.includes('ignition input flapping')),
    ).toHaveLength(1);

    const fast = await rig({ level: 1 });
    await waitFor('gpiomon holding the line', () => fast.input.watching);
    for (let i = 0; i < 62; i++) {
      await fast.edge(i % 2 === 0 ? 0 : 1);
      fast.clock.advance(100);
    }
    expect(fast.changes).toHaveLength(1);
    expect(fast.input.unstable()).toMatch(/^ignition input unstable: 62 changes in a minute/);
  });

  it("a failure is one sentence, said once while it lasts: the busy line of gpiomon's real message", async () => {
    const log = captureLogger();
    const r = await rig({ level: 1, logger: log.logger, start: false });
    r.gpiod.failWith('gpiomon', 'gpiomon: unable to request lines on chip /dev/gpiochip0: Device or resource busy\n');
    await r.input.start();
    const retry = async (): Promise<void> => {
      await waitFor('the next attempt scheduled', () => r.clock.nextTimerAt() !== undefined);
      r.clock.advance(r.clock.nextTimerAt()! - r.clock.monotonicMs());
    };
    await retry();
    await retry();
    await waitFor('the third attempt scheduled', () => r.clock.nextTimerAt() !== undefined);
    expect(log.text()).toMatch(/line 17 of gpiochip0 is busy: another program holds it \(gpioinfo gpiochip0 names its consumer\)/);
    expect(attempts(log.text())).toBe(1);
    r.gpiod.failWith('gpiomon', undefined);
    await retry();
    await waitFor('gpiomon holding the line', () => r.input.watching);
    expect(attempts(log.text())).toBe(1);
    expect(log.text()).toMatch(/ignition gpio line watched again/);
  });

  it('the daemon builds it from ignition.gpio (AgentOptions.gpiodTools for the tools): status says the ignition it read', async () => {
    const gpiod = fakeGpiod(1);
    const tracker = await startedTracker(gpiod.tools);
    expect(tracker.status().ignition).toBe('on');
    await waitFor('gpiomon holding the line', () => gpiod.gpiomonPids().length === 1);
  });

  it('without the tools the ignition is "unknown" with the reason, not the "off" of an input never read; status is DEGRADED', async () => {
    const tracker = await startedTracker({ gpioget: '/nonexistent/gpioget', gpiomon: '/nonexistent/gpiomon' });
    const status = tracker.status();
    expect(status.ignition).toBe('unknown');
    expect(status.ignitionFault).toMatch(/gpioget/);
    const snapshot = { ...liveSnapshot(Date.now(), '/var/lib/telematics-agent'), motion: status };
    const health = assessHealth(snapshot);
    expect(health.level).not.toBe('healthy');
    expect(health.reasons.join('\n')).toMatch(/^ignition input not read: .*gpioget.*no engine events until it is$/m);
  });

  it("explains the tools' real failures in one sentence each; a missing tool names Debian's gpiod", async () => {
    const l = { chip: 'gpiochip0', line: 17, activeLow: false };
    const says = (stderr: string) => explainGpiodFailure('gpiomon', l, { stderr, code: 1 });
    expect(says("gpiomon: cannot find GPIO chip character device 'gpiochip0'\n")).toMatch(/^GPIO chip gpiochip0 not found/);
    expect(says("gpiomon: offset 17 is out of range on chip 'gpiochip0'\n")).toMatch(/^gpiochip0 has no line 17/);
    expect(says("gpiomon: unable to open chip '/dev/gpiochip0': Permission denied\n")).toMatch(/service user needs the gpio group/);
    expect(says("gpiomon: unable to open chip '/dev/gpiochip0': Operation not permitted\n")).toMatch(/DeviceAllow=char-gpiochip/);
    // gpiod 1.x (Debian 12) knows neither --banner nor -c.
    expect(says("gpiomon: unrecognized option '--banner'\ngpiomon: try gpiomon --help\n")).toMatch(/needs gpiod 2\.x/);
    expect(says('gpiomon: something new\n')).toBe('gpiomon exited with code 1: gpiomon: something new');
    const missing: GpiodTools = { gpioget: '/nonexistent/gpioget', gpiomon: '/nonexistent/gpiomon' };
    await expect(readGpioLine(l, missing)).rejects.toThrow(
      /gpioget not found: ignition.gpio needs Debian's gpiod package \(apt-get install gpiod/,
    );
  });

  it('a real gpio-sim line through the installed gpiod tools', async (ctx) => {
    const why = realGpioSkip();
    if (why) return ctx.skip(why);
    const sim = gpioSim(ctx.task.id);
    onTestFinished(() => sim.remove());
    sim.pull(3, 'pull-up');
    const changes: boolean[] = [];
    const input = new GpioIgnitionInput({
      chip: sim.chip,
      line: 3,
      activeLow: false,
      debounceS: 0.2,
      clock: systemClock,
      timers: systemTimers,
      logger: silentLogger(),
      onChange: (on) => changes.push(on),
    });
    onTestFinished(() => input.stop());
    await input.start();
    expect(changes).toEqual([true]);
    await waitFor('gpiomon holding the line', () => input.watching);
    sim.pull(3, 'pull-down');
    await waitFor('the engine stop', () => changes.length === 2);
    expect(changes).toEqual([true, false]);
  });
});

function attempts(log: string): number {
  return log.split('\n').filter((l) => l.includes('ignition gpio input failed')).length;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const GPIO_SIM = '/sys/kernel/config/gpio-sim';

/** Why the real-line test cannot run here, or false. */
function realGpioSkip(): string | false {
  if (!existsSync(GPIO_SIM)) return `no ${GPIO_SIM} (gpio-sim module and configfs, root): a container has neither`;
  try {
    if (!/v2\./.test(execFileSync('gpiomon', ['--version'], { encoding: 'utf8' }))) return 'gpiomon is not libgpiod v2';
  } catch {
    return 'no gpiomon (apt-get install gpiod, 2.x)';
  }
  return false;
}

/** A simulated chip of 8 lines (Documentation/admin-guide/gpio/gpio-sim.rst), its pulls set through sysfs. */
function gpioSim(name: string) {
  const dev = path.join(GPIO_SIM, `ta-${name}`.replace(/[^\w-]/g, '').slice(0, 30));
  mkdirSync(dev);
  mkdirSync(path.join(dev, 'bank0'));
  writeFileSync(path.join(dev, 'bank0', 'num_lines'), '8');
  writeFileSync(path.join(dev, 'live'), '1');
  const chip = readFileSync(path.join(dev, 'bank0', 'chip_name'), 'utf8').trim();
  const platform = readFileSync(path.join(dev, 'dev_name'), 'utf8').trim();
  return {
    chip,
    pull: (line: number, pull: 'pull-up' | 'pull-down') =>
      writeFileSync(`/sys/devices/platform/${platform}/${chip}/sim_gpio${line}/pull`, pull),
    remove: () => {
      writeFileSync(path.join(dev, 'live'), '0');
      rmdirSync(path.join(dev, 'bank0'));
      rmdirSync(dev);
    },
  };
}
