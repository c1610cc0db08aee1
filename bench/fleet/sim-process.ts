import { fork } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SimUrls } from '../../src/sim/index.js';
import type { SimHandle, SimOptions } from './sim-core.js';

/** The simulator in its own process (compiled: dist/bench/bench/fleet/sim-child.js beside this file). */
export async function simChildProcess(options: SimOptions): Promise<SimHandle> {
  const file = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sim-child.js');
  const child = fork(file, [JSON.stringify(options)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const urls = await new Promise<SimUrls>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`fleet simulator exited with ${code}`)));
    child.once('message', (m: { ready?: SimUrls }) => (m.ready ? resolve(m.ready) : reject(new Error('unexpected first message'))));
  });
  let next = 1;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  child.on('message', (m: { id?: number; result?: unknown; error?: string }) => {
    const w = m.id !== undefined ? waiting.get(m.id) : undefined;
    if (!w) return;
    waiting.delete(m.id!);
    if (m.error !== undefined) w.reject(new Error(m.error));
    else w.resolve(m.result);
  });
  const call = <T>(op: string, ...args: unknown[]): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ id, op, args });
    });
  return {
    urls,
    setFaults: (route, spec) => call('setFaults', route, spec),
    expireAccessTokens: () => call('expireAccessTokens'),
    restartTimeline: () => call('restartTimeline'),
    timeline: () => call('timeline'),
    summary: () => call('summary'),
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      await call('stop').catch(() => undefined);
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
