/**
 * How the demo shows itself. On a terminal: the status screen of `telematics-agent status` under
 * the demo's header, redrawn in place once a second (cursor hidden meanwhile, restored at the end,
 * even when the demo fails). Anywhere else (CI, a pipe, a log file): the same frame as plain text
 * every few seconds and at every phase change, with no escape codes, so logs stay readable.
 */
import { systemClock, type Clock } from '../system/clock.js';
import { renderStatus } from '../terminal/status-screen.js';
import { wrapToWidth } from '../terminal/screen-fit.js';
import type { StatusSnapshot } from '../status/snapshot.js';
import { renderDemoHeader, type DemoHeader } from './header.js';

export const SCREEN_LINES = 24;

const ESC = '\u001b[';
const HIDE_CURSOR = `${ESC}?25l`;
const SHOW_CURSOR = `${ESC}?25h`;

export interface DemoScreenOptions {
  out: NodeJS.WritableStream & { isTTY?: boolean };
  /** Colour (a terminal without NO_COLOR); cursor movement depends on isTTY alone. */
  color: boolean;
  /** A terminal is redrawn at most this often; default 1000 ms. */
  redrawEveryMs?: number;
  /** Plain output prints a frame this often; default 5000 ms. */
  plainEveryMs?: number;
  /** Paces the redraws on its monotonic clock (default the system's). */
  clock?: Pick<Clock, 'monotonicMs'>;
}

/** The header and the status screen (with the satellite table on a terminal), 80x24 at most. */
export function demoFrame(
  header: DemoHeader,
  snapshot: StatusSnapshot | undefined,
  o: { color: boolean; satellites: boolean; nowMs: number },
): string[] {
  const top = renderDemoHeader(header, o.color);
  if (!snapshot) return [...top, "waiting for the daemon's status socket ..."];
  const status = renderStatus(snapshot, { color: o.color, satellites: o.satellites, nowMs: o.nowMs, maxLines: SCREEN_LINES - top.length });
  // The demo is a screen of 80 columns, in a log too: details wrap under their text.
  return [...top, ...wrapToWidth(status, 80, 10).trimEnd().split('\n')];
}

export class DemoScreen {
  readonly #options: DemoScreenOptions;
  readonly #tty: boolean;
  #lastAt = Number.NEGATIVE_INFINITY;
  #lastText: string | undefined;
  #began = false;

  constructor(options: DemoScreenOptions) {
    this.#options = options;
    this.#tty = options.out.isTTY === true;
  }

  /** Whether frames are redrawn in place (and may carry the satellite table). */
  get tty(): boolean {
    return this.#tty;
  }

  begin(): void {
    this.#began = true;
    if (this.#tty) this.#options.out.write(`${HIDE_CURSOR}${ESC}2J`);
  }

  /** Shows the frame when it is due, or at once with `force` (a phase change). */
  show(frame: readonly string[], force = false): void {
    const now = (this.#options.clock ?? systemClock).monotonicMs();
    const every = this.#tty ? (this.#options.redrawEveryMs ?? 1000) : (this.#options.plainEveryMs ?? 5000);
    if (!force && now - this.#lastAt < every) return;
    this.#lastAt = now;
    this.#write(frame);
  }

  /** The last frame (when given and not the one just shown), then the cursor back below it. */
  end(frame?: readonly string[]): void {
    if (frame && frame.join('\n') !== this.#lastText) this.#write(frame);
    if (this.#tty && this.#began) this.#options.out.write(`${SHOW_CURSOR}\n`);
    this.#began = false;
  }

  #write(frame: readonly string[]): void {
    this.#lastText = frame.join('\n');
    if (this.#tty) {
      // Home, each line cleared to its end, the rest of the screen cleared: no flicker, no scroll
      // (no newline after the 24th line).
      this.#options.out.write(`${ESC}H${frame.join(`${ESC}K\n`)}${ESC}K${ESC}J`);
    } else {
      this.#options.out.write(`${frame.join('\n')}\n\n`);
    }
  }
}
