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

import type { GpsdReceiverReport } from '../health/receiver-health.js';

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
  | { kind: 'tpv'; report: GpsdReceiverReport; device?: string }
  | { kind: 'other'; class: string }
  | { kind: 'malformed' };

/**
 * `"json":true` beside the sentences: gpsd's TPV carries the antenna's state and the jamming
 * indicator of receivers that give them only in binary (u-blox's MON-HW/MON-RF, gpsd 3.25+).
 * The fixes still come from the NMEA; of the JSON only those fields are read.
 */
export function watchRequest(device?: string): string {
  return `?WATCH=${JSON.stringify({ enable: true, json: true, nmea: true, ...(device !== undefined ? { device } : {}) })}\n`;
}

function receiverReport(r: Record<string, unknown>): GpsdReceiverReport {
  const report: GpsdReceiverReport = {};
  if (typeof r.ant === 'number') report.ant = r.ant;
  if (typeof r.antPwr === 'number') report.antPwr = r.antPwr;
  if (typeof r.jam === 'number') report.jam = r.jam;
  return report;
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
    case 'TPV':
      return typeof r.device === 'string'
        ? { kind: 'tpv', report: receiverReport(r), device: r.device }
        : { kind: 'tpv', report: receiverReport(r) };
    case 'ERROR':
      return { kind: 'error', message: typeof r.message === 'string' ? r.message : 'unknown error' };
    default:
      return typeof r.class === 'string' ? { kind: 'other', class: r.class } : { kind: 'malformed' };
  }
}
