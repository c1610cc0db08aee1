/**
 * The antenna's state as receivers report it. In plain NMEA: u-blox prints a TXT notice at start
 * and on each change (`$GNTXT,01,01,02,ANTSTATUS=OK`, with INIT, DONTKNOW, OPEN, SHORT as the
 * other words in its integration manuals); other receivers (AT6558/CASIC modules) print
 * `ANTENNA OK|OPEN|SHORT`. Through gpsd: TPV's `ant` (gps.h: 1 OK, 2 OPEN, 3 SHORT; gpsd_json(5)
 * has 2 and 3 the other way round, the drivers and the JSON writer follow gps.h) and `antPwr`.
 */

export type AntennaState = 'OK' | 'OPEN' | 'SHORT' | 'INIT' | 'unknown';

/** Open or short: a fault the technician must fix. */
export function antennaFault(state: AntennaState): boolean {
  return state === 'OPEN' || state === 'SHORT';
}

// "ANTSTATUS=OK", "ANT STATUS: OPEN", "ANTENNA SHORT", "Antenna status: ok"; DONTKNOW / DON'T KNOW is unknown.
const TEXT = /\bANT(?:ENNA)?[ _]?(?:STATUS)?\s*[=:]?\s*(OK|GOOD|OPEN|SHORT|INIT|DONT ?KNOW|DON'T KNOW)\b/i;

/** The state a TXT sentence's text names, or undefined when it is about something else. */
export function antennaFromText(text: string): AntennaState | undefined {
  const m = TEXT.exec(text);
  if (!m) return undefined;
  const word = (m[1] ?? '').toUpperCase();
  if (word === 'OK' || word === 'GOOD') return 'OK';
  if (word === 'OPEN' || word === 'SHORT' || word === 'INIT') return word;
  return 'unknown';
}

/**
 * The text of a TXT sentence's fields as the frame splits them (`GNTXT,01,01,02,ANTSTATUS=OK`):
 * total, number, severity, then the text, which may itself hold commas.
 */
export function textOfTxt(fields: readonly string[]): string {
  return fields.slice(4).join(',');
}

/** gpsd's TPV `ant` code, by gps.h (ANT_OK 1, ANT_OPEN 2, ANT_SHORT 3); 0 or anything else is unknown. */
export function antennaFromGpsd(code: number): AntennaState {
  switch (code) {
    case 1:
      return 'OK';
    case 2:
      return 'OPEN';
    case 3:
      return 'SHORT';
    default:
      return 'unknown';
  }
}
