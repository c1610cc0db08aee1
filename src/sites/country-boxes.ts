/**
 * Coarse bounding boxes (degrees, [south, west, north, east]) of the countries where the fleets
 * this agent serves operate: all of Europe, its neighbours, and the larger countries elsewhere.
 * They only feed the swapped-latitude/longitude warning (swap-check.ts), never a refusal, so
 * boxes are generous (mainland plus near islands; far overseas territories left out) and
 * a country may have several. A country missing here simply gets the heuristic check.
 */
export type Box = readonly [south: number, west: number, north: number, east: number];

export const COUNTRY_BOXES: Readonly<Record<string, readonly Box[]>> = {
  // Benelux and neighbours
  NL: [[50.7, 3.3, 53.6, 7.3]],
  BE: [[49.45, 2.5, 51.55, 6.45]],
  LU: [[49.4, 5.7, 50.2, 6.55]],
  DE: [[47.25, 5.85, 55.1, 15.05]],
  FR: [[41.3, -5.2, 51.1, 9.6]],
  GB: [[49.85, -8.7, 60.9, 1.8]],
  IE: [[51.4, -10.7, 55.45, -5.95]],
  // Iberia and the Mediterranean
  ES: [
    [35.1, -9.4, 43.8, 4.4],
    [27.6, -18.2, 29.5, -13.3],
  ],
  PT: [
    [36.9, -9.55, 42.2, -6.15],
    [32.6, -17.3, 33.15, -16.2],
    [36.9, -31.3, 39.8, -25.0],
  ],
  AD: [[42.4, 1.4, 42.7, 1.8]],
  IT: [[35.45, 6.6, 47.1, 18.55]],
  MT: [[35.75, 14.15, 36.1, 14.6]],
  SM: [[43.85, 12.4, 44.0, 12.55]],
  VA: [[41.89, 12.44, 41.91, 12.46]],
  MC: [[43.72, 7.4, 43.76, 7.44]],
  GR: [[34.8, 19.35, 41.75, 29.65]],
  CY: [[34.55, 32.25, 35.7, 34.6]],
  TR: [[35.8, 25.65, 42.1, 44.85]],
  // Alps and central Europe
  CH: [[45.8, 5.95, 47.85, 10.5]],
  LI: [[47.05, 9.45, 47.3, 9.65]],
  AT: [[46.35, 9.5, 49.05, 17.2]],
  CZ: [[48.55, 12.05, 51.1, 18.9]],
  SK: [[47.7, 16.8, 49.65, 22.6]],
  PL: [[49.0, 14.1, 54.9, 24.15]],
  HU: [[45.7, 16.1, 48.6, 22.9]],
  SI: [[45.4, 13.35, 46.9, 16.6]],
  // Nordics and Baltics
  DK: [[54.55, 8.05, 57.8, 15.2]],
  NO: [[57.9, 4.6, 71.2, 31.1]],
  SE: [[55.3, 10.95, 69.1, 24.2]],
  FI: [[59.7, 19.0, 70.1, 31.6]],
  IS: [[63.3, -24.6, 66.6, -13.4]],
  EE: [[57.5, 21.75, 59.7, 28.25]],
  LV: [[55.65, 20.95, 58.1, 28.25]],
  LT: [[53.9, 20.9, 56.45, 26.85]],
  // Balkans and the east
  HR: [[42.35, 13.45, 46.55, 19.45]],
  BA: [[42.55, 15.7, 45.3, 19.65]],
  RS: [[42.2, 18.8, 46.2, 23.05]],
  ME: [[41.85, 18.4, 43.6, 20.4]],
  AL: [[39.6, 19.25, 42.7, 21.1]],
  MK: [[40.85, 20.45, 42.4, 23.05]],
  XK: [[41.85, 20.0, 43.3, 21.8]],
  BG: [[41.2, 22.35, 44.25, 28.65]],
  RO: [[43.6, 20.25, 48.3, 29.75]],
  MD: [[45.45, 26.6, 48.5, 30.15]],
  UA: [[44.35, 22.1, 52.4, 40.25]],
  BY: [[51.25, 23.15, 56.2, 32.8]],
  RU: [
    [41.15, 19.6, 82.0, 180],
    [64.0, -180, 72.0, -168.9],
  ],
  GE: [[41.05, 40.0, 43.6, 46.75]],
  AM: [[38.8, 43.4, 41.3, 46.65]],
  AZ: [[38.35, 44.75, 41.95, 50.4]],
  KZ: [[40.55, 46.45, 55.45, 87.35]],
  // Middle East and North Africa
  MA: [[27.6, -13.2, 35.95, -1.0]],
  DZ: [[18.95, -8.7, 37.1, 12.0]],
  TN: [[30.2, 7.5, 37.6, 11.6]],
  LY: [[19.5, 9.3, 33.2, 25.2]],
  EG: [[21.95, 24.7, 31.7, 36.95]],
  IL: [[29.45, 34.25, 33.35, 35.9]],
  JO: [[29.15, 34.95, 33.4, 39.3]],
  SA: [[16.3, 34.5, 32.2, 55.7]],
  AE: [[22.6, 51.5, 26.1, 56.4]],
  IR: [[25.05, 44.0, 39.8, 63.35]],
  // Americas
  US: [
    [24.4, -124.85, 49.4, -66.9],
    [51.2, -180, 71.5, -129.9],
    [51.2, 172, 53.1, 180],
    [18.9, -160.3, 22.3, -154.8],
  ],
  CA: [[41.65, -141.0, 83.2, -52.6]],
  MX: [[14.5, -118.5, 32.75, -86.7]],
  BR: [[-33.8, -74.0, 5.3, -34.75]],
  AR: [[-55.1, -73.6, -21.75, -53.6]],
  CL: [[-56.0, -75.8, -17.5, -66.4]],
  CO: [[-4.25, -79.05, 12.5, -66.85]],
  PE: [[-18.35, -81.35, -0.05, -68.65]],
  // Asia and Oceania
  CN: [[18.15, 73.5, 53.6, 134.8]],
  IN: [[6.7, 68.1, 35.7, 97.45]],
  JP: [[24.0, 122.9, 45.6, 145.9]],
  KR: [[33.1, 124.6, 38.65, 131.9]],
  ID: [[-11.0, 95.0, 6.1, 141.05]],
  TH: [[5.6, 97.35, 20.5, 105.65]],
  VN: [[8.4, 102.1, 23.4, 109.5]],
  AU: [[-43.7, 113.1, -10.6, 153.7]],
  NZ: [[-47.35, 166.4, -34.35, 178.6]],
  // Sub-Saharan Africa
  ZA: [[-34.85, 16.45, -22.1, 32.9]],
  NG: [[4.25, 2.65, 13.9, 14.7]],
  KE: [[-4.7, 33.9, 5.05, 41.9]],
  ET: [[3.4, 32.95, 14.9, 48.0]],
};

/** Tolerance around every box, degrees: coordinates on a border or a coast must not warn. */
const MARGIN_DEG = 0.1;

export function isKnownCountry(code: string): boolean {
  return Object.hasOwn(COUNTRY_BOXES, code);
}

export function inCountry(code: string, lat: number, lon: number): boolean {
  const boxes = COUNTRY_BOXES[code];
  return boxes !== undefined && boxes.some((b) => inBox(b, lat, lon));
}

/** Every known country whose box holds the point (boxes overlap near borders). */
export function countriesAt(lat: number, lon: number): string[] {
  return Object.keys(COUNTRY_BOXES).filter((code) => inCountry(code, lat, lon));
}

function inBox([south, west, north, east]: Box, lat: number, lon: number): boolean {
  return lat >= south - MARGIN_DEG && lat <= north + MARGIN_DEG && lon >= west - MARGIN_DEG && lon <= east + MARGIN_DEG;
}
