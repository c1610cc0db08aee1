import { recordingDefaults } from '../gnss/recording-policy.js';

/** The demo's closing figures and the check that makes `npm start` (and its test) pass or fail. */
export interface DemoSummary {
  fixesRead: number | undefined;
  recorded: number | undefined;
  delivered: number;
  duplicates: number;
  passwordGrants: number;
  refreshes: number;
  /** Requests the simulated outage refused. */
  outageRefusals: number;
  /** Most fixes waiting in the outbox during the outage. */
  peakBacklog: number;
  dead: number;
  /** The movement events the platform received, one line each (tripLines). */
  trips?: string[];
  /** The engine events it received, and the ignition changes the demo made (each should be one). */
  engine?: { lines: string[]; changes: number };
}

export const isEngineEvent = (e: Record<string, unknown>): boolean =>
  e.eventType === 'startEngineEvent' || e.eventType === 'stopEngineEvent';

type Measure = { value?: number };

/** `08:12:03Z  stopMovingEvent   52.09053, 5.11245  odometer 3.42 km`, in GNSS time order. */
export function tripLines(events: readonly Record<string, unknown>[]): string[] {
  return events
    .map((e) => {
      const g = (e.geoReference ?? {}) as { lat?: number; lon?: number };
      const attributes = (e.externalAttributes ?? {}) as { odometer?: Measure; engineHours?: Measure };
      const odo = attributes.odometer?.value;
      const hours = attributes.engineHours?.value;
      return {
        at: String(e.creationDate ?? ''),
        line: `${String(e.creationDate ?? '?').slice(11, 19)}Z  ${String(e.eventType).padEnd(17)} ${g.lat?.toFixed(5)}, ${g.lon?.toFixed(5)}${odo === undefined ? '' : `  odometer ${(odo / 1000).toFixed(2)} km`}${hours === undefined ? '' : `  engine ${hours.toFixed(1)} h`}`,
      };
    })
    .sort((a, b) => a.at.localeCompare(b.at))
    .map((x) => x.line);
}

export function demoProblems(s: DemoSummary): string[] {
  const p: string[] = [];
  if (s.recorded === undefined) p.push('the daemon did not report how many fixes it recorded');
  else if (s.delivered !== s.recorded) p.push(`delivered ${s.delivered} of ${s.recorded} recorded fixes`);
  if (s.duplicates !== 0) p.push(`${s.duplicates} duplicate deliveries`);
  if (s.passwordGrants !== 1) p.push(`${s.passwordGrants} password grants (expected exactly 1: refresh tokens should carry the session)`);
  if (s.dead !== 0) p.push(`${s.dead} fixes refused by the platform (dead letters)`);
  if (s.engine && s.engine.lines.length !== s.engine.changes)
    p.push(`${s.engine.lines.length} engine events delivered for ${s.engine.changes} ignition changes`);
  return p;
}

export function renderSummary(s: DemoSummary): string {
  const n = (v: number | undefined): string => (v === undefined ? '?' : String(v));
  // A row, and the events listed under it.
  const rows: Array<[string, string, string[]?]> = [
    ['fixes read', n(s.fixesRead)],
    ['recorded', n(s.recorded)],
    ['delivered', n(s.delivered)],
    ['duplicates', n(s.duplicates)],
    ['password grants', n(s.passwordGrants)],
    ['token refreshes', n(s.refreshes)],
    ['outage refusals', `${s.outageRefusals} (backlog peaked at ${s.peakBacklog} ${s.peakBacklog === 1 ? 'fix' : 'fixes'}, then drained)`],
  ];
  if (s.trips !== undefined)
    rows.push([
      'trips',
      s.trips.length === 0
        ? 'no stop of 60 s or more in this drive (motion.stopAfterS)'
        : `${s.trips.length} ${s.trips.length === 1 ? 'event' : 'events'}:`,
      s.trips,
    ]);
  const engine = s.engine;
  if (engine !== undefined) {
    const events = `${engine.lines.length} ${engine.lines.length === 1 ? 'event' : 'events'}`;
    const changes = `${engine.changes} ignition ${engine.changes === 1 ? 'change' : 'changes'}`;
    rows.push(['engine', `${events} for ${changes} (off at the depot, on to leave)${engine.lines.length > 0 ? ':' : ''}`, engine.lines]);
  }
  const problems = demoProblems(s);
  return [
    'demo summary',
    ...rows.flatMap(([k, v, listed = []]) => [`  ${k.padEnd(16)} ${v}`, ...listed.map((l) => `    ${l}`)]),
    // Why so few of the fixes read became events: the first question a newcomer asks.
    whyLine(s),
    problems.length === 0
      ? `result: every recorded fix delivered exactly once, one password grant${engine && engine.changes > 0 ? ', every ignition change an engine event' : ''}`
      : `result: FAILED: ${problems.join('; ')}`,
    'next: the README\'s "The agent against the simulator" runs the daemon step by step; there `telematics-agent status --watch` shows this screen',
    '',
  ].join('\n');
}

/** Why so few fixes became events, as the default path policy decides (at once, or up to maxDelayS late). */
function whyLine(s: DemoSummary): string {
  const r = recordingDefaults();
  const late = r.maxDelayS > 0;
  const bound = late
    ? `within ${r.pathToleranceM} m 95 % of the time and ${r.pathMaxDeviationM} m at most (deciding up to ${r.maxDelayS} s late)`
    : `within ${r.pathToleranceM} m`;
  const n = (v: number | undefined): string => (v === undefined ? '?' : String(v));
  return `why ${n(s.recorded)} of ${n(s.fixesRead)}: recording.mode "path" keeps the fixes where the track bends more than ${r.pathToleranceM} m from a straight line, and two at each stop; the platform's track stays ${bound} ("all" keeps every fix)`;
}
