import { printable } from '../terminal/printable.js';

/** The columns of `device list`: what a technician matches a vehicle by. */
const COLUMNS = ['externalDeviceId', 'licensePlate', 'carrierCode', 'externalSystemId', 'active', 'deviceUUID'] as const;

function cell(v: unknown): string {
  if (v === undefined || v === null) return '-';
  return printable(typeof v === 'string' ? v : JSON.stringify(v));
}

/** The devices as an aligned table (platform strings with control characters made visible). */
export function deviceTable(devices: readonly Record<string, unknown>[]): string {
  const rows = devices.map((d) => COLUMNS.map((c) => cell(d[c])));
  const widths = COLUMNS.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return `${[line(COLUMNS), ...rows.map(line)].join('\n')}\n${devices.length} device${devices.length === 1 ? '' : 's'}\n`;
}
