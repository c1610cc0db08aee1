/**
 * The two lines above the status screen in the demo: where the drive is, what the demo is doing
 * to the platform, and the figures the summary ends with, live.
 */
import { PHASE_TEXT, type DemoPhase } from './outage.js';

export interface DemoHeader {
  elapsedMs: number;
  /** Fraction of the drive replayed, 0..1. */
  progress: number;
  /** city / depot / highway at the replay's position, when known. */
  stretch?: string;
  phase: DemoPhase;
  /** From the daemon. */
  recorded?: number;
  queued?: number;
  /** From the simulator's counters. */
  uploaded: number;
  refreshes: number;
  passwordGrants: number;
}

const WIDTH = 80;

export function renderDemoHeader(h: DemoHeader, color: boolean): string[] {
  const s = Math.floor(h.elapsedMs / 1000);
  const clock = `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
  const drive = `drive ${Math.round(h.progress * 100)}%${h.stretch ? ` ${h.stretch}` : ''}`;
  const phase = paint(PHASE_TEXT[h.phase], h.phase, color);
  const n = (v: number | undefined): string => (v === undefined ? '?' : String(v));
  const first = `demo ${clock} · ${drive} · ${phase}`;
  const second = `recorded ${n(h.recorded)}  queued ${n(h.queued)}  uploaded ${h.uploaded}  token refreshes ${h.refreshes}  password grants ${h.passwordGrants}`;
  // Only the phase carries colour codes; the plain text decides the width.
  const plainFirst = `demo ${clock} · ${drive} · ${PHASE_TEXT[h.phase]}`;
  return [plainFirst.length <= WIDTH ? first : plainFirst.slice(0, WIDTH), second.slice(0, WIDTH)];
}

function paint(text: string, phase: DemoPhase, color: boolean): string {
  if (!color) return text;
  const code = phase === 'outage' ? '31' : phase === 'draining' ? '33' : phase === 'starting' ? '2' : '32';
  return `\u001b[1;${code}m${text}\u001b[0m`;
}
