/**
 * The gpsd check (config `gnss.gpsd`): connect as the agent does, watch with "nmea":true for a few
 * seconds, and say what gpsd reported: its version, the receiver it serves (path, driver) and
 * whether sentences flow. gpsd shares the receiver, so this works beside the running service too.
 * The sentences it collected feed the usual fix and clock checks.
 */
import type { Logger } from '../log.js';
import { formatGpsdAddress, type GpsdAddress } from '../config/gpsd-address.js';
import { GpsdSource, type GpsdConnector } from '../gnss/sources/gpsd-source.js';
import { printable } from '../terminal/printable.js';
import { fail, pass, type CheckResult } from './check.js';

export interface GpsdProbe {
  bytes: Buffer;
  result: CheckResult;
}

export async function probeGpsd(o: {
  address: GpsdAddress;
  device?: string;
  listenMs: number;
  logger: Logger;
  connect?: GpsdConnector;
}): Promise<GpsdProbe> {
  const chunks: Buffer[] = [];
  let size = 0;
  const source = new GpsdSource({
    address: o.address,
    ...(o.device !== undefined ? { device: o.device } : {}),
    logger: o.logger,
    ...(o.connect ? { connect: o.connect } : {}),
    // One attempt is the finding; doctor does not wait out a backoff.
    backoff: { initialMs: o.listenMs * 10, maxMs: o.listenMs * 10, jitter: 0 },
    silenceMs: o.listenMs * 10,
  });
  source.onData((c) => {
    // Enough for the fix and clock checks; a bounded sample.
    if (size < 256 * 1024) chunks.push(c);
    size += c.length;
  });
  await source.start();
  await new Promise((r) => setTimeout(r, o.listenMs));
  const link = source.link();
  const info = source.info();
  await source.stop();
  const where = `gpsd at ${formatGpsdAddress(o.address)}`;
  const bytes = Buffer.concat(chunks);
  let result: CheckResult;
  if (info.release === undefined)
    result = fail(
      'gpsd',
      `cannot talk to ${where}: ${printable(link.lastError ?? 'no answer')}`,
      'start gpsd (systemctl enable --now gpsd.socket) or correct gnss.gpsd; gpsd listens on 127.0.0.1:2947 by default',
    );
  else if (info.device === undefined || !info.device.active)
    result = fail(
      'gpsd',
      `${where} (gpsd ${printable(info.release)}): ${printable(link.lastError ?? 'no receiver')}`,
      o.device !== undefined
        ? 'check gnss.gpsdDevice against the devices gpsd serves (gpspipe -w -n 3)'
        : 'set DEVICES="/dev/serial/by-id/..." in /etc/default/gpsd and restart gpsd, or plug the receiver in',
    );
  else if (bytes.length === 0)
    result = fail(
      'gpsd',
      `${where} (gpsd ${printable(info.release)}) serves ${printable(info.device.path)} but passed no NMEA in ${(o.listenMs / 1000).toFixed(0)} s`,
      'check the receiver with gpsmon or cgps; GPSD_OPTIONS="-n" in /etc/default/gpsd keeps gpsd reading',
    );
  else
    result = pass(
      'gpsd',
      `${where} (gpsd ${printable(info.release)}) serves ${printable(info.device.path)}${info.device.driver ? ` (${printable(info.device.driver)})` : ''}: ${size} bytes of NMEA in ${(o.listenMs / 1000).toFixed(0)} s`,
    );
  return { bytes, result };
}
