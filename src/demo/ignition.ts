import type { PhaseSpan } from '../sim/receiver/index.js';
import { writeFileAtomic } from '../system/atomic-file.js';

/** The driver switches the engine off this long after parking at the depot, s of the drive. */
const OFF_AFTER_PARKING_S = 10;
/** ... and on this long before pulling away: the engine runs before the vehicle moves. */
const ON_BEFORE_LEAVING_S = 30;

export interface IgnitionStep {
  /** Seconds since the drive's start (GNSS time). */
  atS: number;
  on: boolean;
}

/** Off at the depot stop, on again to leave it; none for a drive without one. */
export function depotIgnitionSteps(phases: readonly PhaseSpan[]): IgnitionStep[] {
  const depot = phases.find((p) => p.phase === 'depot');
  if (!depot || depot.to - depot.from <= OFF_AFTER_PARKING_S + ON_BEFORE_LEAVING_S) return [];
  return [
    { atS: depot.from + OFF_AFTER_PARKING_S, on: false },
    { atS: depot.to - ON_BEFORE_LEAVING_S, on: true },
  ];
}

/**
 * The demo's ignition input: a value file the daemon polls (config `ignition.file`, on above 0),
 * switched as the replayed drive passes each step, so the platform receives engine events beside
 * the trips. On before the daemon starts: that is the vehicle's state, not a change.
 */
export class DemoIgnition {
  readonly #file: string;
  readonly #steps: IgnitionStep[];
  #next = 0;

  constructor(file: string, steps: readonly IgnitionStep[]) {
    this.#file = file;
    this.#steps = [...steps].sort((a, b) => a.atS - b.atS);
  }

  start(): void {
    this.#write(true);
  }

  /** The ignition changes the drive has passed so far. */
  get changes(): number {
    return this.#next;
  }

  /**
   * The drive is at `driveS`: the next step that is due, if any. One step per call, so that a
   * slow poll that passed two steps still leaves the daemon time to read the first.
   */
  update(driveS: number): void {
    const step = this.#steps[this.#next];
    if (!step || driveS < step.atS) return;
    this.#write(step.on);
    this.#next += 1;
  }

  #write(on: boolean): void {
    // Replaced whole (rename): a poll never reads a half-written file.
    writeFileAtomic(this.#file, on ? '1\n' : '0\n', { mode: 0o644 });
  }
}
