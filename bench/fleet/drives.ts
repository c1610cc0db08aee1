import { generateDrive } from '../../src/sim/receiver/drive.js';

/**
 * The project's synthetic drive (src/sim/receiver/drive.ts) as a fleet replays it: a few route
 * variants (seeds), each cut into one chunk per epoch. Only the timed sentences that make a fix are
 * kept (ZDA, RMC, GGA): the satellite sentences (GSA, GSV, VTG) would multiply the decoding work of
 * a thousand receivers in one process and change nothing the platform sees. Chunks are shared,
 * read-only, by every vehicle on that variant.
 */
export interface DriveVariant {
  seed: number;
  /** One Buffer per epoch (CRLF lines). */
  epochs: Buffer[];
}

const KEEP = /^\$..(ZDA|RMC|GGA),/;

export function driveVariants(count: number, minutes: number, firstSeed = 101): DriveVariant[] {
  const variants: DriveVariant[] = [];
  for (let k = 0; k < count; k++) {
    const seed = firstSeed + k;
    const drive = generateDrive({ minutes, seed, hz: 1 });
    const epochs: Buffer[] = [];
    let current: string[] = [];
    let pendingZda: string | undefined;
    for (const line of drive.lines) {
      if (!KEEP.test(line)) continue;
      if (line.slice(3, 6) === 'ZDA') {
        pendingZda = line;
        continue;
      }
      if (line.slice(3, 6) === 'RMC') {
        if (current.length > 0) epochs.push(Buffer.from(current.map((l) => `${l}\r\n`).join(''), 'latin1'));
        current = pendingZda ? [pendingZda] : [];
        pendingZda = undefined;
      }
      current.push(line);
    }
    if (current.length > 0) epochs.push(Buffer.from(current.map((l) => `${l}\r\n`).join(''), 'latin1'));
    variants.push({ seed, epochs });
  }
  return variants;
}
