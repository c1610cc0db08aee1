/**
 * The serial supervisor with an injected port (a fake with the node-serialport surface) and fake
 * timers: reconnect with capped backoff, first failure loud and repeats quiet, link state.
 */
import { EventEmitter } from 'node:events';
import { pino } from 'pino';
import type { Logger } from '../../src/log.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { backoffDelay } from '../../src/gnss/sources/reopen-backoff.js';
import { SerialSource, type SerialPortLike } from '../../src/gnss/sources/serial-source.js';

class FakePort extends EventEmitter implements SerialPortLike {
  isOpen = false;
  constructor(private readonly fail: Error | undefined) {
    super();
  }
  open(cb: (err: Error | null) => void): void {
    queueMicrotask(() => {
      if (this.fail) return cb(this.fail);
      this.isOpen = true;
      cb(null);
    });
  }
  close(cb?: (err: Error | null) => void): void {
    this.isOpen = false;
    cb?.(null);
  }
}

const LEVELS: Record<number, string> = { 20: 'debug', 30: 'info', 40: 'warn', 50: 'error' };

function memoryLogger(): { logger: Logger; entries: { level: string; msg: string }[] } {
  const entries: { level: string; msg: string }[] = [];
  const logger = pino(
    { level: 'debug' },
    {
      write: (s: string) => {
        const e = JSON.parse(s) as { level: number; msg: string };
        entries.push({ level: LEVELS[e.level] ?? String(e.level), msg: e.msg });
      },
    },
  );
  return { logger, entries };
}

describe('backoffDelay', () => {
  it('doubles from the initial delay up to the cap, with jitter below the nominal delay', () => {
    const o = { initialMs: 500, maxMs: 30_000, jitter: 0.5 };
    expect([1, 2, 3, 4, 10].map((a) => backoffDelay(a, o, () => 0))).toEqual([500, 1000, 2000, 4000, 30_000]);
    expect(backoffDelay(3, o, () => 1)).toBe(1000);
    expect(backoffDelay(1000, o, () => 0)).toBe(30_000);
  });
});

describe('SerialSource', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('retries an absent receiver with backoff, logs once loudly, then reports the link open', async () => {
    const enoent = Object.assign(new Error('Error: No such file or directory, cannot open /dev/ttyACM0'), { code: 'ENOENT' });
    const ports: FakePort[] = [];
    let failures = 3;
    const { logger, entries } = memoryLogger();
    const source = new SerialSource({
      path: '/dev/ttyACM0',
      baudRate: 9600,
      logger,
      random: () => 0,
      portFactory: () => {
        const p = new FakePort(failures-- > 0 ? enoent : undefined);
        ports.push(p);
        return p;
      },
    });
    const chunks: Buffer[] = [];
    source.onData((c) => chunks.push(c));
    await source.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(source.link()).toMatchObject({ status: 'retrying', attempts: 1 });
    expect(source.link().lastError).toContain('No such file');
    await vi.advanceTimersByTimeAsync(500);
    expect(source.link().attempts).toBe(2);
    await vi.advanceTimersByTimeAsync(999);
    expect(ports).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(ports).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(2000);
    expect(ports).toHaveLength(4);
    expect(source.link()).toMatchObject({ status: 'open', attempts: 0 });

    expect(entries.filter((e) => e.level === 'warn')).toHaveLength(1);
    expect(entries.filter((e) => e.level === 'debug')).toHaveLength(2);
    expect(entries.at(-1)).toMatchObject({ level: 'info', msg: 'GNSS receiver link restored' });

    ports[3]?.emit('data', Buffer.from('$GPGGA\r\n'));
    expect(chunks.map(String)).toEqual(['$GPGGA\r\n']);
    expect(source.link().bytes).toBe(8);

    // The receiver is unplugged while open: the port closes with an error; the source reopens.
    const open = ports[3];
    open?.emit('close', new Error('Disconnected'));
    expect(source.link().status).toBe('retrying');
    await vi.advanceTimersByTimeAsync(500);
    expect(ports).toHaveLength(5);
    expect(source.link().status).toBe('open');
    expect(entries.filter((e) => e.level === 'warn')).toHaveLength(2);

    await source.stop();
    expect(source.link().status).toBe('stopped');
    expect(ports[4]?.isOpen).toBe(false);
    // Nothing is retried after stop.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(ports).toHaveLength(5);
  });
});
