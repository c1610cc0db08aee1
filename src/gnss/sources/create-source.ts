/**
 * The configured receiver source: gpsd (`gnss.gpsd`), a replay (`gnss.replayFile`) or the serial
 * port (`gnss.path`). The schema guarantees exactly one of them.
 */
import { systemClock, type Clock } from '../../system/clock.js';
import type { Config } from '../../config/load.js';
import type { Logger } from '../../log.js';
import { parseGpsdAddress } from '../../config/gpsd-address.js';
import { GpsdSource } from './gpsd-source.js';
import { ReplaySource } from './replay-source.js';
import { SerialSource } from './serial-source.js';
import type { NmeaSource } from './source.js';

export function createNmeaSource(gnss: Config['gnss'], logger: Logger, clock: Pick<Clock, 'wallMs'> = systemClock): NmeaSource {
  if (gnss.replayFile !== undefined) return new ReplaySource({ file: gnss.replayFile, speed: gnss.replaySpeed, logger, clock });
  if (gnss.gpsd !== undefined) {
    const address = parseGpsdAddress(gnss.gpsd);
    if (address === undefined) throw new Error(`gnss.gpsd is not an address: ${gnss.gpsd}`);
    return new GpsdSource({ address, ...(gnss.gpsdDevice !== undefined ? { device: gnss.gpsdDevice } : {}), logger, clock });
  }
  if (gnss.path === undefined) throw new Error('no GNSS source configured');
  return new SerialSource({ path: gnss.path, baudRate: gnss.baudRate, logger, clock });
}
