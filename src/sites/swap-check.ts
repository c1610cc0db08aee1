import { countriesAt, inCountry, isKnownCountry } from './country-boxes.js';
import type { LocationIssue } from './site-types.js';

/**
 * Latitude and longitude typed the wrong way round is the commonest coordinate mistake (even the
 * OTM 5.6 spec's own location example has it: docs/platform-contract.md, Sites). Both orders are
 * usually valid numbers, so it is a warning, decided like this:
 *
 * - the address names a country this check knows (country-boxes.ts): the coordinate should lie in
 *   that country's box. Outside it but inside when swapped -> "looks swapped"; outside either way
 *   -> "lies outside <country>" (a wrong coordinate or a wrong country);
 * - no country (or one the table lacks): the coordinate lies in none of the known countries'
 *   boxes while the swapped one lies in at least one -> "looks swapped", naming that country.
 *   A point in a country missing from the table can warn falsely; giving `country` makes it exact.
 */
export function swapWarnings(lat: number, lon: number, country: string | undefined, path = 'geoReference'): LocationIssue[] {
  if (!Number.isFinite(lat) || !Number.isFinite(lon)) return [];
  const swappedValid = Math.abs(lon) <= 90;
  const swapped = `lat ${fmt(lon)}, lon ${fmt(lat)}`;
  const given = `lat ${fmt(lat)}, lon ${fmt(lon)}`;
  if (country !== undefined && isKnownCountry(country)) {
    if (inCountry(country, lat, lon)) return [];
    if (swappedValid && lat !== lon && inCountry(country, lon, lat)) {
      return [
        {
          path,
          message: `${given} lies outside ${country}, but ${swapped} lies inside: latitude and longitude look swapped (did you mean ${swapped}?)`,
        },
      ];
    }
    return [{ path, message: `${given} lies outside ${country} (administrativeReference.country); check the coordinate and the country` }];
  }
  if (!swappedValid || lat === lon) return [];
  if (countriesAt(lat, lon).length > 0) return [];
  const there = countriesAt(lon, lat);
  if (there.length === 0) return [];
  return [
    {
      path,
      message: `${given} lies in none of the countries this check knows, but ${swapped} lies in ${there.join('/')}: latitude and longitude look swapped (did you mean ${swapped}?; set administrativeReference.country to make this check exact)`,
    },
  ];
}

function fmt(n: number): string {
  return String(n);
}
