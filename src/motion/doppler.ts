import type { Fix } from '../fix/fix.js';

/** The receiver's measured (Doppler) speed, m/s; undefined where it gave none or the decoder derived it from positions. */
export function dopplerSpeed(fix: Fix): number | undefined {
  return fix.speedDerived ? undefined : fix.speed;
}
