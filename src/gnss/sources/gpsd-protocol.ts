/**
 * The part of gpsd's JSON client protocol (gpsd_json(5)) the agent speaks. It asks for the
 * receiver's own NMEA (`?WATCH={"enable":true,"nmea":true}`): gpsd then passes every sentence
 * through as the receiver sent it, so the agent's decoder, its conformance with gpsd's decoding,
 * the quality gate and the recording policy stay exactly those of the serial path, and the fix
 * times keep the receiver's milliseconds. (TPV/SKY JSON would be gpsd's merged view instead:
 * another decoder with its own epoch and mode rules, and no way to compare both paths fix for fix.)
 * Besides the sentences, gpsd sends a few JSON objects: VERSION on connect, DEVICES and WATCH in
 * answer to ?WATCH, DEVICE when a receiver comes or goes, ERROR for a bad request.
 */

export interface GpsdDevice {
  path: string;
  /** gpsd's driver name ("NMEA0183", "u-blox", ...), once it has identified the receiver. */
  driver?: string;
  bps?: number;
  /** False when gpsd reports the device deactivated (unplugged, or gpsd gave up on it). */
  active: boolean;
}

export type GpsdMessage =
  | { kind: 'version'; release: string }
  | { kind: 'devices'; devices: GpsdDevice[] }
  | { kind: 'device'; device: GpsdDevice }
  | { kind: 'watch' }
  | { kind: 'error'; message: string }
  | { kind: 'other'; class: string }
  | { kind: 'malformed' };

export function watchRequest(device?: string): string {
  return `?WATCH=${JSON.stringify({ enable: true, nmea: true, ...(device !== undefined ? { device } : {}) })}\n`;
}

function device(o: Record<string, unknown>): GpsdDevice | undefined {
  if (typeof o.path !== 'string') return undefined;
  const d: GpsdDevice = { path: o.path, active: o.activated !== 0 && o.activated !== undefined };
  if (typeof o.driver === 'string') d.driver = o.driver;
  if (typeof o.bps === 'number') d.bps = o.bps;
  return d;
}

/** One JSON line from gpsd; anything unexpected is 'malformed', never an exception. */
export function parseGpsdLine(line: string): GpsdMessage {
  let o: unknown;
  try {
    o = JSON.parse(line);
  } catch {
    return { kind: 'malformed' };
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return { kind: 'malformed' };
  const r = o as Record<string, unknown>;
  switch (r.class) {
    case 'VERSION':
      return { kind: 'version', release: typeof r.release === 'string' ? r.release : '?' };
    case 'DEVICES': {
      if (!Array.isArray(r.devices)) return { kind: 'malformed' };
      const devices: GpsdDevice[] = [];
      for (const d of r.devices)
        if (typeof d === 'object' && d !== null) devices.push(...[device(d as Record<string, unknown>)].filter((x) => x !== undefined));
      return { kind: 'devices', devices };
    }
    case 'DEVICE': {
      const d = device(r);
      return d ? { kind: 'device', device: d } : { kind: 'malformed' };
    }
    case 'WATCH':
      return { kind: 'watch' };
    case 'ERROR':
      return { kind: 'error', message: typeof r.message === 'string' ? r.message : 'unknown error' };
    default:
      return typeof r.class === 'string' ? { kind: 'other', class: r.class } : { kind: 'malformed' };
  }
}
