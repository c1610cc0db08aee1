/**
 * Drives beside the urban delivery route (urban-route.ts), for the benches that count events per
 * hour on more than one kind of road: a dense city grid, a winding rural road, a highway.
 * Deterministic from the random source.
 */
import type { Random } from '../random.js';
import type { Leg } from './route.js';

const KMH = 1 / 3.6;

/**
 * A dense city grid: a corner every 80-120 m (slowing to 15 km/h to turn, left or right), a traffic
 * light every 300-400 m, red for 15-60 s, cruising at 20-40 km/h between them.
 */
export function planDenseGridRoute(o: { random: Random; minutes: number }): Leg[] {
  const r = o.random;
  const legs: Leg[] = [];
  let heading = 90;
  let driven = 0;
  let sinceLightM = 0;
  let nextLightM = 300 + r() * 100;
  while (driven < o.minutes * 60) {
    const distanceM = 80 + r() * 40;
    const cruiseMps = (20 + r() * 20) * KMH;
    sinceLightM += distanceM;
    const red = sinceLightM >= nextLightM;
    legs.push({ kind: 'drive', phase: 'city', heading, distanceM, cruiseMps, endMps: red ? 0 : 15 * KMH });
    driven += distanceM / (cruiseMps * 0.7);
    if (red) {
      const seconds = Math.round(15 + r() * 45);
      legs.push({ kind: 'park', phase: 'city', seconds });
      driven += seconds;
      sinceLightM = 0;
      nextLightM = 300 + r() * 100;
    }
    heading = (heading + (r() < 0.5 ? 90 : 270)) % 360;
  }
  legs.push({ kind: 'park', phase: 'city', seconds: 30 });
  return legs;
}

/**
 * A winding rural road: bends of 10-60 degrees every 100-400 m at 60-90 km/h (the vehicle turns at
 * the receiver model's 30 degrees a second, so each bend is an arc), a village to slow through now and then.
 */
export function planWindingRuralRoute(o: { random: Random; minutes: number }): Leg[] {
  const r = o.random;
  const legs: Leg[] = [];
  let heading = 0;
  let driven = 0;
  while (driven < o.minutes * 60) {
    const distanceM = 100 + r() * 300;
    const village = r() < 0.05;
    const cruiseMps = (village ? 50 : 60 + r() * 30) * KMH;
    legs.push({ kind: 'drive', phase: 'highway', heading, distanceM, cruiseMps, endMps: cruiseMps * (0.6 + r() * 0.4) });
    driven += distanceM / (cruiseMps * 0.9);
    heading = (heading + (r() < 0.5 ? -1 : 1) * (10 + r() * 50) + 360) % 360;
  }
  legs.push({ kind: 'drive', phase: 'city', heading, distanceM: 100, cruiseMps: 30 * KMH, endMps: 0 });
  legs.push({ kind: 'park', phase: 'city', seconds: 30 });
  return legs;
}

/** A highway: gentle bends of up to 15 degrees every 1.5-3 km at 95-115 km/h, in from a ramp and out to a stop. */
export function planHighwayRoute(o: { random: Random; minutes: number }): Leg[] {
  const r = o.random;
  const legs: Leg[] = [{ kind: 'drive', phase: 'highway', heading: 45, distanceM: 400, cruiseMps: 80 * KMH, endMps: 80 * KMH }];
  let heading = 45;
  let driven = 0;
  while (driven < o.minutes * 60) {
    const distanceM = 1500 + r() * 1500;
    const cruiseMps = (95 + r() * 20) * KMH;
    heading = (heading + (r() - 0.5) * 30 + 360) % 360;
    legs.push({ kind: 'drive', phase: 'highway', heading, distanceM, cruiseMps, endMps: 95 * KMH });
    driven += distanceM / cruiseMps;
  }
  legs.push({ kind: 'drive', phase: 'city', heading, distanceM: 300, cruiseMps: 50 * KMH, endMps: 0 });
  legs.push({ kind: 'park', phase: 'city', seconds: 30 });
  return legs;
}
