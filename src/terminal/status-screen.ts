/**
 * The human status screen: compact and aligned. Colour only when the caller says the output is a
 * terminal and NO_COLOR is unset (https://no-color.org). Details (errors, notes, reasons) are never
 * cut here: the caller wraps them on a terminal, fits a --watch frame to the screen,
 * and sends them whole into a pipe. Text from elsewhere (the platform, the receiver's port, error
 * messages) goes through printable(): its control characters are shown, not obeyed.
 */
import { wrapToWidth } from './screen-fit.js';
import type { SatelliteInView } from '../fix/fix.js';
import { printable } from './printable.js';
import { assessHealth, failingFor, formatAge, type Health } from '../status/health.js';
import type { StatusSnapshot } from '../status/snapshot.js';

export interface RenderOptions {
  color: boolean;
  /** Add the satellite table (`--watch`). */
  satellites?: boolean;
  /** Host wall clock now (epoch ms), for "ago" figures. */
  nowMs: number;
  /** Most lines the screen may take (the satellite table gets what is left); default 23, a 24-line terminal less the cursor's. */
  maxLines?: number;
  /**
   * The terminal's width: long lines (an error and its cause) wrap under their text before the
   * satellite table takes the rows left, so that `--watch`, which clips what is wider than the
   * screen, never cuts the cause off. Absent: lines go out whole (a pipe).
   */
  width?: number;
}

const ESC = '\u001b[';
type Paint = (s: string) => string;

function palette(color: boolean): { ok: Paint; warn: Paint; bad: Paint; dim: Paint; bold: Paint } {
  const wrap = (code: string): Paint => (color ? (s) => `${ESC}${code}m${s}${ESC}0m` : (s) => s);
  return { ok: wrap('32'), warn: wrap('33'), bad: wrap('31'), dim: wrap('2'), bold: wrap('1') };
}

export function useColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === '') && env.TERM !== 'dumb';
}

const LABEL = 10;
const row = (label: string, text: string): string => `${label.padEnd(LABEL)}${text}`;

export function bytes(n: number | undefined): string {
  if (n === undefined) return '?';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

/**
 * "3 min ago": on the daemon's monotonic clock when it gave the age (`ageS`), else between wall
 * stamps, which a clock step can reverse: a stamp in the future is said so, not shown as
 * "0 s ago", and an age across the host clock is marked as such when the snapshot has both kinds.
 */
export function ago(atMs: number | undefined, nowMs: number, ageS?: number): string {
  if (ageS !== undefined) return `${formatAge(Math.max(0, ageS))} ago`;
  if (atMs === undefined) return 'never';
  const s = (nowMs - atMs) / 1000;
  if (s >= -1) return `${formatAge(Math.max(0, s))} ago (host clock)`;
  return `${formatAge(-s)} in the future by the host clock (the clock was set back since, or is wrong now)`;
}

function coord(v: number | undefined, pos: string, neg: string): string {
  return v === undefined ? '?' : `${Math.abs(v).toFixed(5)} ${v >= 0 ? pos : neg}`;
}

export function renderStatus(s: StatusSnapshot, o: RenderOptions, health: Health = assessHealth(s)): string {
  const c = palette(o.color);
  const verdict = health.level === 'healthy' ? c.ok('HEALTHY') : health.level === 'degraded' ? c.warn('DEGRADED') : c.bad('FAILING');
  const lines: string[] = [];
  if (!s.daemon.running) lines.push(c.bad('daemon not running: facts below are from the database (last known)'));
  const d = s.daemon;
  const head = `telematics-agent ${d.version} · ${d.running ? `running, pid ${d.pid ?? '?'}, up ${formatAge(d.uptimeS ?? 0)}` : 'stopped'}`;
  lines.push(`${head.slice(0, 70).padEnd(71)}${verdict}`);

  const r = s.receiver;
  if (r) {
    const link = r.link === 'open' ? c.ok(r.link) : r.link === 'retrying' ? c.warn(r.link) : c.bad(r.link);
    const sentence = r.lastSentenceAgeS === undefined ? 'no sentence yet' : `last sentence ${r.lastSentenceAgeS.toFixed(1)} s ago`;
    const reconnects = r.reconnects ? `  reconnects ${r.reconnects}` : '';
    const port = printable(r.port);
    // A long port (a replay file's path) gets its own line rather than being cut.
    if (port.length > 44) lines.push(row('receiver', port), row('', `${link}  ${sentence}${reconnects}`));
    else lines.push(row('receiver', `${port}  ${link}  ${sentence}${reconnects}`));
    // An open gpsd link can still lack a receiver: gpsd's own words say so while nothing arrives.
    const quiet = r.lastSentenceAgeS === undefined || r.lastSentenceAgeS > 10;
    if (r.lastError && (r.link !== 'open' || quiet)) lines.push(row('', c.dim(printable(r.lastError))));
    const mode = r.mode === 3 ? c.ok('3D') : r.mode === 2 ? c.warn('2D') : c.bad('no fix');
    const parts = [mode];
    if (r.mode !== undefined && r.mode >= 2) {
      parts.push(`${coord(r.lat, 'N', 'S')} ${coord(r.lon, 'E', 'W')}`);
      if (r.speedKmh !== undefined) parts.push(`${r.speedKmh.toFixed(0)} km/h`);
      if (r.hdop !== undefined) parts.push(`HDOP ${r.hdop.toFixed(1)}`);
    }
    lines.push(row('  fix', parts.join('  ')));
    if (r.fixTime !== undefined) {
      const off =
        r.clockOffsetS === undefined
          ? ''
          : `  system clock ${r.clockOffsetS >= 0 ? '+' : '-'}${Math.abs(r.clockOffsetS) < 90 ? `${Math.abs(r.clockOffsetS).toFixed(1)} s` : formatAge(Math.abs(r.clockOffsetS))}`;
      lines.push(row('  time', `${new Date(r.fixTime).toISOString().replace('.000', '')} (GNSS)${off}`));
    }
    const sats = r.constellations.map((k) => `${shortName(k.constellation)} ${k.used}/${k.inView}`).join('  ');
    // The health gets a row of its own when it has something to tell (the antenna's word, a trend,
    // jamming); a receiver that says nothing of its antenna shows only its signal, on the sats row,
    // so that the screen still fits a 24-line terminal.
    const h = r.health;
    const quietHealth =
      h !== undefined &&
      h.antenna === 'unknown' &&
      h.jamming.state === 'none' &&
      h.signal.trend !== 'falling' &&
      h.signal.trend !== 'rising';
    const cn0 = quietHealth && h.signal.topMeanDbHz !== undefined ? `  C/N0 ${Math.round(h.signal.topMeanDbHz)} dB-Hz` : '';
    lines.push(row('  sats', `used ${r.satellitesUsed ?? 0}  ${sats || 'none in view'}${cn0}`));
    if (h && !quietHealth) lines.push(row('receiver', receiverHealthLine(h)));
    if (r.rolloverCorrections) lines.push(row('  dates', `${r.rolloverCorrections} corrected by 1024 weeks (GPS week rollover)`));
  }

  if (s.motion) lines.push(row('vehicle', motionLine(s.motion)));
  // Since the daemon started (the tracker stores no count): why the odometer may read less than the fixes' track.
  if (s.motion?.positionJumps)
    lines.push(row('', `position jumps left out: ${s.motion.positionJumps} since start (not counted in the odometer nor the trips)`));

  const g = s.registration;
  lines.push(
    row(
      'device',
      g.externalDeviceId
        ? `${printable(g.externalSystemId ?? '?')} / ${printable(g.externalDeviceId)} (${printable(g.externalDeviceIdSource ?? '?')})`
        : c.warn('no identity yet'),
    ),
  );
  lines.push(row('  uuid', g.deviceUUID ? printable(g.deviceUUID) : c.warn('not registered')));

  const t = s.token;
  if (t) {
    const state = t.state === 'valid' ? c.ok(t.state) : t.state === 'rejected' ? c.bad(t.state) : c.warn(t.state);
    const age = t.ageS === undefined ? '' : `, ${formatAge(t.ageS)} old`;
    lines.push(row('token', `${state}${age}  password grants ${t.passwordGrants}  refreshes ${t.refreshes}`));
    if (t.lastError && t.state !== 'valid') lines.push(row('', c.dim(printable(`${t.lastError.code}: ${t.lastError.message}`))));
    // Parked: the lapsed token is the plan (the next heartbeat renews it); a line of its own keeps the row in 80 columns.
    else if (t.state === 'expired' && t.renewal === 'next-request')
      lines.push(row('', c.dim('renewed at the next request (none lately: parked)')));
  }

  const ob = s.outbox;
  const basis = ob.oldestPendingAgeBasis === undefined ? '' : ob.oldestPendingAgeBasis === 'gnss' ? ', GNSS time' : ', host clock';
  const oldest = ob.oldestPendingAgeS === undefined ? '' : ` (oldest ${formatAge(ob.oldestPendingAgeS)}${basis})`;
  lines.push(
    row(
      'outbox',
      `pending ${ob.pending}${oldest}  thinned ${ob.thinned}  dead letters ${ob.deadLetters > 0 ? c.warn(String(ob.deadLetters)) : '0'}`,
    ),
  );
  if (ob.lastDeadLetter)
    lines.push(row('', c.dim(printable(`last dead letter ${ago(ob.lastDeadLetter.at, o.nowMs)}: ${ob.lastDeadLetter.reason}`))));
  const u = s.upload;
  const recorded = ob.recorded === undefined ? '' : `recorded ${ob.recorded}  `;
  lines.push(row('upload', `${recorded}sent today ${ob.sentToday}  last success ${ago(u.lastSuccessAt, o.nowMs, u.lastSuccessAgeS)}`));
  const drain = drainLine(ob.pending, u.drain);
  if (drain) lines.push(row('drain', drain));
  if (u.lastError)
    lines.push(
      row(
        '',
        printable(
          `last error ${u.lastError.code} (${u.lastError.class}) ${ago(u.lastError.at, o.nowMs, u.lastError.ageS)}: ${u.lastError.message}`,
        ),
      ),
    );
  if (u.fault) {
    lines.push(row('', c.bad(`FAILING since ${ago(u.fault.since, o.nowMs, u.fault.forS)}: HTTP ${u.fault.status ?? '?'} for every event`)));
    for (const line of wrapToWidth(printable(u.fault.hint).replace(/\s+/g, ' '), 68, 0).trimEnd().split('\n')) lines.push(row('', line));
  }
  const p = s.platform;
  if (p) {
    // While it answers with errors (503), "last answer" would say it is silent: the last one it took.
    const last = p.failing?.status !== undefined ? 'last success' : 'last answer';
    const answer = p.lastAnswerAgeS === undefined ? `no ${last} yet` : `${last} ${formatAge(p.lastAnswerAgeS)} ago`;
    lines.push(row('platform', p.failing ? `${answer}  ${c.warn(failingFor(p.failing).replace(/^platform /, ''))}` : answer));
  }
  const n = s.network;
  if (n) {
    const io = (v: { sent: number; received: number }): string => `↑${bytes(v.sent)} ↓${bytes(v.received)}`;
    lines.push(row('network', `${n.protocol ?? 'no connection yet'}  today ${io(n.today)}  month ${io(n.thisMonth)}`));
  }
  const disk = `database ${bytes(s.disk.databaseBytes)}  free ${bytes(s.disk.freeBytes)}`;
  // The folder whole, on its own line when it would not fit beside the figures.
  if (disk.length + s.disk.dataDir.length + 4 > 70) lines.push(row('disk', disk), row('', `(${s.disk.dataDir})`));
  else lines.push(row('disk', `${disk}  (${s.disk.dataDir})`));
  for (const n of s.notes ?? []) lines.push(c.dim(printable(n)));
  for (const reason of health.reasons) lines.push(`${health.level === 'failing' ? c.bad('!') : c.warn('!')} ${printable(reason)}`);

  const shown = o.width === undefined ? lines : wrapToWidth(lines.join('\n'), o.width, LABEL).trimEnd().split('\n');
  if (o.satellites && r?.satellites) shown.push(...satelliteTable(r.satellites, (o.maxLines ?? 23) - shown.length, c));
  return `${shown.join('\n')}\n`;
}

function shortName(constellation: string): string {
  return (
    ({ GPS: 'GPS', GLONASS: 'GLO', Galileo: 'GAL', BeiDou: 'BDS', QZSS: 'QZS', NavIC: 'IRN', SBAS: 'SBS' } as Record<string, string>)[
      constellation
    ] ?? constellation.slice(0, 3)
  );
}

/** cgps-style table, two columns of satellites side by side so that 20 fit in 10 lines. */
export function satelliteTable(sats: readonly SatelliteInView[], maxLines: number, c: { ok: Paint; dim: Paint }): string[] {
  if (maxLines < 3) return [];
  const sorted = [...sats].sort((a, b) => Number(b.used) - Number(a.used) || (b.snr ?? 0) - (a.snr ?? 0));
  const rows = Math.min(maxLines - 2, Math.ceil(sorted.length / 2));
  const cell = (s: SatelliteInView | undefined): string => {
    if (!s) return ''.padEnd(38);
    const bar = '#'.repeat(Math.round(Math.min(50, s.snr ?? 0) / 5)).padEnd(10, '.');
    const text = `${shortName(s.constellation).padEnd(4)}${String(s.id).padStart(3)} ${fmt(s.elevation, 3)} ${fmt(s.azimuth, 4)} ${fmt(s.snr, 3)} ${bar} ${s.used ? 'Y' : 'n'}`;
    return (s.used ? c.ok(text) : c.dim(text)) + ' '.repeat(Math.max(0, 38 - text.length));
  };
  const header = 'GNSS  id  el   az snr C/N0       used';
  const out = [`${header.padEnd(38)}  ${header}`];
  for (let i = 0; i < rows; i++) out.push(`${cell(sorted[i])}  ${cell(sorted[i + rows])}`.trimEnd());
  const shown = rows * 2;
  if (sorted.length > shown) out.push(c.dim(`... ${sorted.length - shown} more satellites in view`));
  return out;
}

function fmt(v: number | undefined, width: number): string {
  return (v === undefined ? '-' : String(Math.round(v))).padStart(width);
}

const DRAIN_LIMITS: Record<string, string> = {
  pushback: 'slowed: the platform pushes back (429/503)',
  latency: 'slowed: the platform answers slower (its queue grows)',
  link: 'slowed: timeouts or dropped connections',
  ceiling: 'at its ceiling (upload.concurrency)',
  'rate-ceiling': 'at its ceiling (upload.backlogMaxRatePerS)',
  growing: 'speeding up',
};

/**
 * The backlog's drain, while there is one: how fast, about how long to go, and why no
 * faster. A backlog of one fix is the live one in flight: no line.
 */
export function drainLine(pending: number, d: NonNullable<StatusSnapshot['upload']['drain']> | undefined): string | undefined {
  if (!d || pending <= 1) return undefined;
  const eta = d.ratePerS > 0 ? `about ${formatAge(pending / d.ratePerS)} to go` : 'not moving';
  const latency = d.latencyMs !== undefined && d.baseLatencyMs !== undefined ? `, latency ${d.latencyMs} ms (base ${d.baseLatencyMs})` : '';
  // The window is fractional: below one it is a pace (one request, then a pause of 1/window round trips).
  const flight =
    d.window >= 1
      ? `${Math.floor(d.window)} of ${d.ceiling} in flight`
      : `1 request per ${Math.round(1 / Math.max(d.window, 1e-3))} round trips`;
  return `${pending} to send at ${d.ratePerS.toFixed(1)}/s, ${eta}; ${flight}, ${DRAIN_LIMITS[d.limit] ?? d.limit}${latency}`;
}

/**
 * `stopped since 08:12:03Z  odometer 123,456.7 km  engine 1,234.5 h  ignition off`: the vehicle's
 * day on one line (engine hours with an ignition input); with the daemon stopped, what it stored,
 * said as such.
 */
function motionLine(m: NonNullable<StatusSnapshot['motion']>): string {
  const since = m.since ? ` since ${m.since.slice(11, 19)}Z` : '';
  const tenths = (v: number): string => v.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  const km = tenths(m.odometerM / 1000);
  const engine = m.engineHours === undefined ? '' : `  engine ${tenths(m.engineHours)} h`;
  return `${m.lastKnown ? 'last known: ' : ''}${m.state}${since}  odometer ${km} km${engine}  ignition ${m.ignition}${m.ignitionFault ? ` (${m.ignitionFault})` : ''}${m.ignitionUnstable ? ` (${m.ignitionUnstable})` : ''}${m.lastKnown ? ' (stored)' : ''}`;
}

/** `antenna OK  C/N0 42 dB-Hz (top 4)  jamming none`, with the trend when it moves. */
export function receiverHealthLine(h: NonNullable<StatusSnapshot['receiver']>['health'] & object): string {
  const top = h.signal.topMeanDbHz === undefined ? 'C/N0 -' : `C/N0 ${Math.round(h.signal.topMeanDbHz)} dB-Hz (top 4)`;
  const trend =
    h.signal.trend === 'falling' || h.signal.trend === 'rising'
      ? ` ${h.signal.trend} ${Math.abs(h.signal.trendDb ?? 0).toFixed(0)} dB`
      : '';
  return `antenna ${h.antenna}  ${top}${trend}  ${h.signal.strong} above 30  jamming ${h.jamming.state}`;
}
