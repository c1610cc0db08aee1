import { readFileSync } from 'node:fs';
import net from 'node:net';

/** Ports below this are left alone (well-known and registered services a machine may run, gpsd's 2947 among them). */
const LOWEST = 10_000;

/** The kernel's ephemeral range's first port (Linux: 32768), or undefined where it cannot be read. */
function ephemeralLow(): number | undefined {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST + 1000 ? low : undefined;
  } catch {
    return undefined;
  }
}

function listensOn(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const got = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(got));
    });
  });
}

/**
 * A loopback port nobody listens on right now, for a server the test starts later on a port it is
 * told (gpsd -S, `sim --port`) or starts again on the same port. Chosen below the kernel's
 * ephemeral range: a port from listen(0) is free again once probed, and every other test's
 * listen(0) and every outgoing connection on the machine may be handed it (or a client retrying
 * a stopped server's port may connect to itself) before the server binds it; outside that range
 * only another test's explicit choice can take it.
 */
export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  if (low !== undefined) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = await listensOn(LOWEST + Math.floor(Math.random() * (low - LOWEST)));
      if (port !== undefined) return port;
    }
  }
  const port = await listensOn(0);
  if (port === undefined) throw new Error('no free loopback port');
  return port;
}
