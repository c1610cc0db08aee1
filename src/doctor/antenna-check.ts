/**
 * The receiver's health in doctor: the antenna as the receiver's own notices said it (u-blox
 * ANTSTATUS and the like, or gpsd's ant), and jamming by the running agent's C/N0 rule.
 * No antenna check when nothing was said: most receivers print it only at start and on a change.
 */
import { antennaAdvice, JAMMING_ADVICE } from '../gnss/health/receiver-health.js';
import type { ReceiverHealthState } from '../gnss/health/receiver-health.js';
import { STRONG_DB_HZ } from '../gnss/health/signal.js';
import { fail, pass, skip, warn, type CheckResult } from './check.js';

export function antennaCheck(h: ReceiverHealthState, from = ''): CheckResult | undefined {
  if (h.antenna === 'unknown') return undefined;
  if (h.antenna === 'OPEN' || h.antenna === 'SHORT')
    return fail('antenna', `the receiver reports the antenna ${h.antenna.toLowerCase()}${from}`, antennaAdvice(h.antenna));
  return pass('antenna', `the receiver reports the antenna ${h.antenna === 'OK' ? 'OK' : 'initialising'}${from}`);
}

/**
 * Jamming, only from an agent that has watched the sky: a few seconds of NMEA cannot tell it from
 * C/N0 (the rule needs 20 s), so doctor's own sample makes no such check. A suspicion is a WARN:
 * the receiver may still hold a fix, and the cause is outside the gateway.
 */
export function jammingCheck(h: ReceiverHealthState, from = ''): CheckResult {
  const top = h.signal.topMeanDbHz;
  // No satellite heard in the last 10 s (no GSV, or an antenna that gives nothing): nothing to judge by.
  if (top === undefined && h.jamming.state === 'none')
    return skip('jamming', `no C/N0 to judge by: no satellite heard in the last 10 s${from}`);
  const signal = top === undefined ? 'no C/N0' : `C/N0 ${Math.round(top)} dB-Hz (top 4)`;
  if (h.jamming.state === 'suspected')
    return warn('jamming', `suspected: ${h.jamming.reason ?? 'C/N0 fell on every satellite at once'}, ${signal}${from}`, JAMMING_ADVICE);
  return pass('jamming', `none suspected, ${signal}, ${h.signal.strong} satellites above ${STRONG_DB_HZ} dB-Hz${from}`);
}
