/**
 * An urban delivery drive, the one the data month is projected from: what a delivery
 * van meets in an hour. City streets with a corner every 100-400 m (a turn slows to 15 km/h) and a
 * red traffic light about every minute and a half of city driving (15 to 60 s), a depot stop of ten
 * minutes, a highway stretch with gentle bends, and back into
 * town. Deterministic from the random source; `describeUrbanRoute` says what a plan has.
 */
import type { Random } from '../random.js';
import type { Leg } from './route.js';

const KMH = 1 / 3.6;

export interface UrbanRouteOptions {
  random: Random;
  /** Minutes of city driving before the depot and after the highway (default 25 and 10). */
  cityMinutes?: [number, number];
  /** Depot stop, seconds (default 600). */
  depotS?: number;
  /** Highway, minutes (default 15). */
  highwayMinutes?: number;
}

export function planUrbanDeliveryRoute(o: UrbanRouteOptions): Leg[] {
  const r = o.random;
  const [cityA, cityB] = o.cityMinutes ?? [25, 10];
  const legs: Leg[] = [];
  let heading = 90;
  const city = (minutes: number): void => {
    let driven = 0;
    let sinceLight = 0;
    let nextLight = 60 + r() * 60;
    while (driven < minutes * 60) {
      const distanceM = 100 + r() * 300;
      const cruiseMps = (30 + Math.round(r()) * 20) * KMH;
      // Rough leg time: cruise plus the slow-down and pick-up at its ends.
      const seconds = distanceM / (cruiseMps * 0.75);
      driven += seconds;
      sinceLight += seconds;
      const light = sinceLight >= nextLight;
      const red = light;
      legs.push({ kind: 'drive', phase: 'city', heading, distanceM, cruiseMps, endMps: red ? 0 : 15 * KMH });
      if (red) legs.push({ kind: 'park', phase: 'city', seconds: Math.round(15 + r() * 45) });
      if (light) {
        sinceLight = 0;
        nextLight = 60 + r() * 60;
      }
      heading = (heading + (r() < 0.5 ? 90 : 270)) % 360;
    }
  };
  city(cityA);
  legs.push({ kind: 'drive', phase: 'city', heading, distanceM: 150, cruiseMps: 30 * KMH, endMps: 0 });
  legs.push({ kind: 'park', phase: 'depot', seconds: o.depotS ?? 600 });
  legs.push({ kind: 'drive', phase: 'city', heading, distanceM: 200, cruiseMps: 30 * KMH, endMps: 30 * KMH });
  heading = (heading + 45) % 360;
  legs.push({ kind: 'drive', phase: 'highway', heading, distanceM: 400, cruiseMps: 80 * KMH, endMps: 80 * KMH });
  let highway = (o.highwayMinutes ?? 15) * 60 * 100 * KMH - 400;
  while (highway > 100) {
    const distanceM = Math.min(highway, 1500 + r() * 1500);
    highway -= distanceM;
    heading = (heading + (r() - 0.5) * 30 + 360) % 360;
    const last = highway <= 100;
    legs.push({ kind: 'drive', phase: 'highway', heading, distanceM, cruiseMps: (98 + r() * 6) * KMH, endMps: last ? 50 * KMH : 95 * KMH });
  }
  heading = (heading + 90) % 360;
  city(cityB);
  legs.push({ kind: 'drive', phase: 'city', heading, distanceM: 100, cruiseMps: 30 * KMH, endMps: 0 });
  legs.push({ kind: 'park', phase: 'city', seconds: 30 });
  return legs;
}

/** What a planned route has, for the benches' headers. */
export function describeUrbanRoute(legs: readonly Leg[]): string {
  const drives = legs.filter((l) => l.kind === 'drive');
  const city = drives.filter((l) => l.phase === 'city');
  const reds = legs.filter((l) => l.kind === 'park' && l.phase === 'city');
  const depot = legs.filter((l) => l.kind === 'park' && l.phase === 'depot').reduce((s, l) => s + (l.kind === 'park' ? l.seconds : 0), 0);
  const highwayKm = drives.filter((l) => l.phase === 'highway').reduce((s, l) => s + (l.kind === 'drive' ? l.distanceM : 0), 0) / 1000;
  const cityKm = city.reduce((s, l) => s + (l.kind === 'drive' ? l.distanceM : 0), 0) / 1000;
  return `${cityKm.toFixed(1)} km of city streets with ${city.length} corners and ${reds.length} red lights (15-60 s), a ${Math.round(depot / 60)}-minute depot stop, ${highwayKm.toFixed(1)} km of highway`;
}
