import { readFile } from 'node:fs/promises';
import { AgentError } from '../errors.js';

/**
 * The hardware identity that becomes device.externalDeviceId when the configuration sets none:
 * the system serial as `systeminformation` reports it (DMI on PCs), the Raspberry Pi's CPU serial
 * (which si also reports as the system serial on a Pi, so it is labelled by its real source), then
 * /etc/machine-id. The probes are injected so the fallback order is testable; the caller stores the
 * choice once (device_identity), so it never changes under a running installation.
 */

export type HardwareIdSource = 'system-serial' | 'cpu-serial' | 'machine-id';

export interface IdentityProbes {
  /** si.system(): serial and model. */
  system(): Promise<{ serial?: string; model?: string } | undefined>;
  /** The `Serial` line of /proc/cpuinfo (Raspberry Pi), undefined elsewhere. */
  cpuSerial(): Promise<string | undefined>;
  /** /etc/machine-id (or /var/lib/dbus/machine-id). */
  machineId(): Promise<string | undefined>;
}

export interface HardwareId {
  value: string;
  source: HardwareIdSource;
}

/** Placeholders firmware writes where a serial should be; never an identity. */
const PLACEHOLDERS = new Set([
  '',
  '-',
  'none',
  'null',
  'n/a',
  'na',
  'not specified',
  'not applicable',
  'to be filled by o.e.m.',
  'default string',
  'system serial number',
  'serial number',
  'invalid',
  'unknown',
  '123456789',
  '0123456789',
  'chassis serial number',
]);

export function usableSerial(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const v = raw.trim();
  if (PLACEHOLDERS.has(v.toLowerCase())) return undefined;
  if (/^[0\s.-]*$/.test(v)) return undefined; // all zeros
  if (/^(.)\1+$/.test(v)) return undefined; // one character repeated (FFFFFFFF)
  return v;
}

export async function probeHardwareId(probes: IdentityProbes): Promise<HardwareId> {
  const system = await probes.system().catch(() => undefined);
  const isPi = /raspberry pi/i.test(system?.model ?? '');
  const systemSerial = isPi ? undefined : usableSerial(system?.serial);
  if (systemSerial) return { value: systemSerial, source: 'system-serial' };
  const cpu = usableSerial(await probes.cpuSerial().catch(() => undefined)) ?? (isPi ? usableSerial(system?.serial) : undefined);
  if (cpu) return { value: cpu.toLowerCase(), source: 'cpu-serial' };
  const machine = usableSerial(await probes.machineId().catch(() => undefined));
  if (machine) return { value: machine.toLowerCase(), source: 'machine-id' };
  throw new AgentError(
    'DEVICE_ID_UNAVAILABLE',
    'no hardware serial and no /etc/machine-id found; set device.externalDeviceId in the configuration',
    { class: 'config' },
  );
}

async function readFirst(files: string[]): Promise<string | undefined> {
  for (const f of files) {
    try {
      return await readFile(f, 'utf8');
    } catch {
      /* try the next */
    }
  }
  return undefined;
}

export const systemProbes: IdentityProbes = {
  system: async () => {
    // Loaded on first use: it is large, and only the first start of an installation needs it.
    const { default: si } = await import('systeminformation');
    const s = await si.system();
    return { serial: s.serial, model: s.model };
  },
  cpuSerial: async () => {
    const text = await readFirst(['/proc/cpuinfo']);
    return text === undefined ? undefined : /^Serial\s*:\s*(\S+)\s*$/m.exec(text)?.[1];
  },
  machineId: () => readFirst(['/etc/machine-id', '/var/lib/dbus/machine-id']),
};
