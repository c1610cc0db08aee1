/**
 * The antenna, as the receiver's own notices in the sample said it (u-blox ANTSTATUS and the like).
 * No check when the sample said nothing: most receivers print it only at start and on a change.
 * A few seconds of NMEA cannot tell jamming from C/N0 (the rule needs 20 s): `status` says that.
 */
import { antennaAdvice } from '../gnss/health/receiver-health.js';
import type { ReceiverHealthState } from '../gnss/health/receiver-health.js';
import { fail, pass, type CheckResult } from './check.js';

export function antennaCheck(h: ReceiverHealthState): CheckResult | undefined {
  if (h.antenna === 'unknown') return undefined;
  if (h.antenna === 'OPEN' || h.antenna === 'SHORT')
    return fail('antenna', `the receiver reports the antenna ${h.antenna.toLowerCase()}`, antennaAdvice(h.antenna));
  return pass('antenna', `the receiver reports the antenna ${h.antenna === 'OK' ? 'OK' : 'initialising'}`);
}
