/**
 * The demo's platform outage and the phase it puts the demo in. The outage starts and ends at
 * fractions of the drive (GNSS time), and lasts at least `minMs` of wall time: at a fast replay
 * pace a window of the drive passes in under a second, too short to see the backlog on a screen
 * that redraws once a second.
 */
export interface OutageWindow {
  /** Fractions of the drive, 0..1. */
  from: number;
  to: number;
  /** Shortest outage in wall-clock ms. */
  minMs: number;
}

export type DemoPhase = 'starting' | 'driving' | 'outage' | 'draining' | 'drive ended';

export const PHASE_TEXT: Record<DemoPhase, string> = {
  starting: 'starting the daemon',
  driving: 'driving',
  outage: 'platform outage injected (events answered 503)',
  draining: 'platform back: draining the backlog',
  'drive ended': 'drive ended: delivering the last fixes',
};

export class DemoOutage {
  readonly #w: OutageWindow;
  #state: 'before' | 'on' | 'after' = 'before';
  #startedAt = 0;
  #drained = false;
  /** Most fixes waiting in the outbox while the platform was out. */
  peakBacklog = 0;

  constructor(window: OutageWindow) {
    this.#w = window;
  }

  get state(): 'before' | 'on' | 'after' {
    return this.#state;
  }

  /**
   * Moves the outage on from the drive's progress and the outbox; returns 'start' or 'end' when
   * the caller must switch the simulator's fault on or off.
   */
  update(progress: number, pending: number, nowMs: number): 'start' | 'end' | undefined {
    if (this.#state === 'before' && progress >= this.#w.from) {
      this.#state = 'on';
      this.#startedAt = nowMs;
      return 'start';
    }
    if (this.#state === 'on') {
      this.peakBacklog = Math.max(this.peakBacklog, pending);
      if (progress >= this.#w.to && nowMs - this.#startedAt >= this.#w.minMs) {
        this.#state = 'after';
        return 'end';
      }
    }
    if (this.#state === 'after' && pending === 0) this.#drained = true;
    return undefined;
  }

  phase(o: { haveFix: boolean; driveEnded: boolean }): DemoPhase {
    if (this.#state === 'on') return 'outage';
    if (this.#state === 'after' && !this.#drained) return 'draining';
    if (o.driveEnded) return 'drive ended';
    return o.haveFix ? 'driving' : 'starting';
  }
}
