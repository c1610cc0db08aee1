import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync, renameSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Config } from '../../src/config/load.js';
import { configSchemas } from '../../src/config/schema.js';
import { silentLogger, type Logger } from '../../src/log.js';
import { buildMotion } from '../../src/motion/agent-motion.js';
import { FileIgnitionInput, readIgnitionValue } from '../../src/motion/file-ignition.js';
import { assessHealth } from '../../src/status/health.js';
import { ManualClock, systemClock, systemTimers, type Timers } from '../../src/system/clock.js';
import { captureLogger } from '../helpers/capture-logger.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';
import { liveSnapshot } from '../status/fixtures.js';

/** A value file (as sysfs or hwmon has it) and the input polling it on a manual clock. */
async function rig(initial: string, logger: Logger = silentLogger()) {
  const file = path.join(tempDir(), 'in_voltage0_raw');
  writeFileSync(file, initial);
  const clock = new ManualClock();
  const changes: { on: boolean; monoMs: number }[] = [];
  let reads = 0;
  const input = new FileIgnitionInput({
    file,
    onAbove: 9000,
    pollMs: 200,
    debounceS: 2,
    clock,
    timers: clock,
    logger,
    read: async (f) => {
      try {
        return await readIgnitionValue(f);
      } finally {
        reads++;
      }
    },
    onChange: (on, monoMs) => changes.push({ on, monoMs }),
  });
  await input.start();
  onTestFinished(() => input.stop());
  /** Moves the clock `ms` in polls, each read done before the next. */
  const run = async (ms: number): Promise<void> => {
    for (let t = 0; t < ms; t += 200) {
      const before = reads;
      clock.advance(200);
      await waitFor('the poll', () => reads > before, { intervalMs: 1 });
    }
  };
  /** Rewrites the value as a writer that renames into place does: never read half-written. */
  const set = (value: string): void => {
    writeFileSync(`${file}.tmp`, value);
    renameSync(`${file}.tmp`, file);
  };
  return { file, clock, changes, run, set, input };
}

/** A FIFO (named pipe) no one writes to; released at the end should anything still block on it. */
function fifo(): string {
  const p = path.join(tempDir(), 'ignition-fifo');
  execFileSync('mkfifo', [p]);
  onTestFinished(() => {
    try {
      closeSync(openSync(p, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // ENXIO: no reader is waiting on it, which is the point.
    }
  });
  return p;
}

/** Filesystem requests in flight in this process (a read blocked in the thread pool is one). */
const fsRequests = (): number => process.getActiveResourcesInfo().filter((r) => r.startsWith('FSReq')).length;

/** The system's timers, counting those set and not yet fired or cleared. */
function countedTimers(): Timers & { live: () => number } {
  const live = new Set<unknown>();
  return {
    setTimeout: (fn, ms) => {
      const h: unknown = systemTimers.setTimeout(() => {
        live.delete(h);
        fn();
      }, ms);
      live.add(h);
      return h;
    },
    clearTimeout: (h) => {
      live.delete(h);
      systemTimers.clearTimeout(h);
    },
    live: () => live.size,
  };
}

const lines = (log: string, msg: RegExp): number => log.split('\n').filter((l) => msg.test(l)).length;

describe('ignition from a polled value file', () => {
  it('a cranking dip is not an engine stop; a stop held 2 s is one, dated when it was first read', async () => {
    const r = await rig('12600\n');
    expect(r.changes).toEqual([{ on: true, monoMs: 0 }]);
    await r.run(1000);
    writeFileSync(r.file, '7100\n'); // cranking: the supply sags for 0.6 s
    await r.run(600);
    writeFileSync(r.file, '13900\n');
    await r.run(3000);
    expect(r.changes).toHaveLength(1);
    const offAt = r.clock.monotonicMs();
    writeFileSync(r.file, '0\n');
    await r.run(3000);
    expect(r.changes).toHaveLength(2);
    expect(r.changes[1]!.on).toBe(false);
    // Within a poll of the change, not when the 2 s were up: well inside 3 s of the input's change.
    expect(r.changes[1]!.monoMs - offAt).toBeLessThanOrEqual(200);
  });

  it('an unreadable or non-numeric file keeps the state and says so once', async () => {
    const r = await rig('1\n');
    writeFileSync(r.file, 'garbage');
    await r.run(3000);
    expect(r.changes).toHaveLength(1);
    await expect(readIgnitionValue(r.file)).rejects.toThrow(/not a number/);
  });
});

describe('ignition.file: only a value file is read, a little of it, and never blocks', () => {
  it('a FIFO with no writer is a fault within a second naming the type and the fix; stop() leaves nothing pending', async () => {
    const file = fifo();
    const fsBefore = fsRequests();
    const timers = countedTimers();
    const input = new FileIgnitionInput({
      file,
      onAbove: 0,
      pollMs: 200,
      debounceS: 2,
      clock: systemClock,
      timers,
      logger: silentLogger(),
      onChange: () => undefined,
    });
    onTestFinished(() => input.stop());
    void input.start();
    await waitFor('the fault', () => input.fault() !== undefined, { timeoutMs: 1000 });
    expect(input.fault()).toBe(
      `${file} is a FIFO (named pipe), not a value file: ignition.file must be a value file such as /sys/class/gpio/gpioN/value, a hwmon inN_input or an IIO in_voltageN_raw`,
    );
    input.stop();
    // Nothing left for the process to wait on: no read in the thread pool, no poll timer.
    await waitFor('no read left in flight', () => fsRequests() <= fsBefore, { timeoutMs: 2000 });
    expect(timers.live()).toBe(0);
  });

  it('a directory, a socket and a char device giving nothing or endless bytes are faults; a number is read from the first bytes only', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'gpio17'));
    await expect(readIgnitionValue(path.join(dir, 'gpio17'))).rejects.toThrow(
      /gpio17 is a directory, not a value file: ignition.file must be/,
    );
    const server = net.createServer().listen(path.join(dir, 'sock'));
    onTestFinished(() => void server.close());
    await waitFor('the socket', () => server.listening);
    await expect(readIgnitionValue(path.join(dir, 'sock'))).rejects.toThrow(/sock is a socket, not a value file/);
    await expect(readIgnitionValue('/dev/null')).rejects.toThrow('/dev/null is empty');
    // A character device that never ends: a whole-file read would never return.
    await expect(readIgnitionValue('/dev/zero')).rejects.toThrow(/\/dev\/zero holds ".*", not a number/);
    const big = path.join(dir, 'value');
    writeFileSync(big, '12600\n' + 'x'.repeat(1 << 20));
    expect(await readIgnitionValue(big)).toBe(12600);
    // A number cut off where the read stops is none.
    writeFileSync(big, '1'.repeat(1 << 20));
    await expect(readIgnitionValue(big)).rejects.toThrow(/not a number/);
    await expect(readIgnitionValue(path.join(dir, 'missing'))).rejects.toThrow(/missing does not exist/);
  });

  it('an empty read of a file rewritten in place is skipped without a word; empty for 2 s, it is a fault', async () => {
    const log = captureLogger();
    const r = await rig('1\n', log.logger);
    for (let i = 0; i < 10; i++) {
      writeFileSync(r.file, ''); // truncated, and read before the writer's write
      await r.run(200);
      expect(r.input.fault()).toBeUndefined();
      writeFileSync(r.file, '1\n');
      await r.run(200);
    }
    expect(log.text()).toBe('');
    writeFileSync(r.file, '');
    await r.run(2200);
    expect(r.input.fault()).toBe(`${r.file} is empty`);
    expect(lines(log.text(), /ignition input unreadable/)).toBe(1);
  });
});

describe('ignition.file: a floor for engine events on a flapping input', () => {
  it('each state held 2.4 s: 6 changes a minute, then one line and held; status says unstable; after 60 s still, the settled state once', async () => {
    const log = captureLogger();
    const r = await rig('12600\n', log.logger);
    for (let i = 0; i < 24; i++) {
      r.set(i % 2 === 0 ? '0\n' : '12600\n');
      await r.run(2400);
    }
    // 24 changes today; 6 a minute is the floor (the 7th made it unstable).
    expect(r.changes).toHaveLength(1 + 6);
    expect(r.input.unstable()).toMatch(
      /^ignition input unstable: \d+ changes in a minute \(a loose wire\?\); engine events held until it holds still for 60 s$/,
    );
    expect(lines(log.text(), /ignition input flapping/)).toBe(1);
    // The last write was on (i = 23), as the last change forwarded (the 6th): it settles off.
    r.set('0\n');
    const settledAt = r.clock.monotonicMs();
    await r.run(59_800);
    expect(r.changes).toHaveLength(7);
    await r.run(400);
    expect(r.input.unstable()).toBeUndefined();
    expect(r.changes).toHaveLength(8);
    expect(r.changes[7]!.on).toBe(false);
    expect(r.changes[7]!.monoMs - settledAt).toBeLessThanOrEqual(200);
    expect(lines(log.text(), /ignition input stable again/)).toBe(1);
    expect(log.text().trim().split('\n')).toHaveLength(2);
  });

  it('a wire flapping at 11 Hz, which the 200 ms poll aliases into a slow signal: read closely while a change is fresh, it is unstable, no event', async () => {
    const file = path.join(tempDir(), 'value');
    writeFileSync(file, '1\n');
    const clock = new ManualClock();
    const log = captureLogger();
    const changes: boolean[] = [];
    let started = 0;
    let finished = 0;
    const input = new FileIgnitionInput({
      file,
      onAbove: 0,
      pollMs: 200,
      debounceS: 2,
      clock,
      timers: clock,
      logger: log.logger,
      read: async (f) => {
        started++;
        try {
          return await readIgnitionValue(f);
        } finally {
          finished++;
        }
      },
      onChange: (on) => changes.push(on),
    });
    onTestFinished(() => input.stop());
    await input.start();
    // Each state held 90 ms, in 10 ms steps of the clock; a read under way is done before the next.
    let level = 1;
    for (let t = 10; t <= 60_000 && input.unstable?.() === undefined; t += 10) {
      const now = Math.floor(t / 90) % 2 === 0 ? 1 : 0;
      if (now !== level) {
        level = now;
        writeFileSync(`${file}.tmp`, `${now}\n`);
        renameSync(`${file}.tmp`, file);
      }
      clock.advance(10);
      await waitFor('the read', () => started === finished, { intervalMs: 1 });
    }
    // Read every 200 ms only, it seemed to change every few seconds: engine events, never unstable.
    expect(input.unstable?.()).toMatch(/^ignition input unstable: \d+ changes in a minute/);
    expect(changes).toEqual([true]);
    expect(log.text().trim().split('\n')).toHaveLength(1);
  });

  it("the daemon's tracker shows it: ignitionUnstable, and status DEGRADED naming it", async () => {
    const file = path.join(tempDir(), 'value');
    writeFileSync(file, '1\n');
    const clock = new ManualClock();
    const config = {
      motion: configSchemas().configSchema.shape.motion.parse({}),
      ignition: configSchemas().configSchema.shape.ignition.parse({ file, onAbove: 0 }),
      recording: { stoppedSpeedKmh: 2 },
    } as unknown as Config;
    // The polls are the timers of pollMs (200 ms): each read done (a real read) before the clock moves on.
    let polls = 0;
    const timers: Timers = {
      setTimeout: (fn, ms) => {
        if (ms === 200 || ms === 20) polls++;
        return clock.setTimeout(fn, ms);
      },
      clearTimeout: (h) => clock.clearTimeout(h),
    };
    const tracker = buildMotion({ config, logger: silentLogger(), clock, timers, lastEpoch: () => undefined })!;
    onTestFinished(() => tracker.stop());
    await tracker.start();
    for (let i = 0; i < 8; i++) {
      writeFileSync(`${file}.tmp`, i % 2 === 0 ? '0\n' : '1\n');
      renameSync(`${file}.tmp`, file);
      for (let t = 0; t < 2400; t += 200) {
        const before = polls;
        clock.advance(200);
        await waitFor('the poll', () => polls > before, { intervalMs: 1 });
      }
    }
    expect(tracker.status().ignition).toBe('on');
    const status = tracker.status();
    expect(status.ignitionUnstable).toMatch(/^ignition input unstable: /);
    const health = assessHealth({ ...liveSnapshot(Date.now(), '/var/lib/telematics-agent'), motion: status });
    expect(health.level).toBe('degraded');
    expect(health.reasons).toContain(status.ignitionUnstable);
  });
});
