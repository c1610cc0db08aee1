import { spawn, type ChildProcess } from 'node:child_process';
import { CLI } from '../helpers/paths.js';
import { sleep } from './systemd-container.js';

/**
 * What the tests of a gateway under a real systemd run beside it on the host: the platform
 * simulator, and a receiver's NMEA fed into the container's serial pty.
 */

/** Writes an NMEA log to stdout one epoch every N ms (an epoch: the lines sharing a time), then stays open. */
export const EPOCH_FEEDER = `import { readFileSync } from 'node:fs';
const [file, everyMs] = process.argv.slice(2);
const epochs = [];
let last;
for (const line of readFileSync(file, 'utf8').split(/\\r?\\n/)) {
  if (line === '') continue;
  const time = /^\\$..(?:ZDA|RMC|GGA|GLL),(\\d{6})/.exec(line)?.[1];
  if (epochs.length === 0 || (time !== undefined && last !== undefined && time !== last)) epochs.push([]);
  if (time !== undefined) last = time;
  epochs.at(-1).push(line + '\\r\\n');
}
let i = 0;
setInterval(() => { if (i < epochs.length) process.stdout.write(epochs[i++].join('')); }, Number(everyMs));
`;

export interface Sim {
  child: ChildProcess;
  urls: { authUrl: string; deviceUrl: string; planningUrl: string; adminUrl: string };
}

/** The built CLI's simulator with one user, `gateway`; resolves once it prints its addresses. */
export async function startSim(password: string): Promise<Sim> {
  const child = spawn(process.execPath, [CLI, 'sim', '--json', '--user', 'gateway', '--password', password], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const urls = await new Promise<Sim['urls']>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0] ?? '') as Sim['urls']);
    });
    child.once('exit', (code) => reject(new Error(`the simulator exited (${code}) before listening`)));
  });
  return { child, urls };
}

/**
 * An admin request, repeated a few times: the simulator closes idle keep-alive connections (as
 * gateways in front of real services do), so a pooled connection fetch reuses can be closed under
 * it ("other side closed", seen under load). Its reads and fault settings are safe to repeat.
 */
export async function simAdmin<T>(sim: Sim, what: string, init?: RequestInit): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      const r = await fetch(`${sim.urls.adminUrl}/${what}`, init);
      return (await r.json()) as T;
    } catch (e) {
      if (attempt >= 3) throw e;
      await sleep(100);
    }
  }
}
