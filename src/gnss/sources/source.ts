/** The seam between the receiver (serial port, replayed file, test double) and the pipeline. */
import type { GpsdReceiverReport } from '../health/receiver-health.js';

export type LinkStatus = 'idle' | 'opening' | 'open' | 'retrying' | 'ended' | 'stopped';

export interface LinkState {
  status: LinkStatus;
  /** Where the bytes come from (device path or file). */
  path: string;
  /** The last error (open failure, I/O error, device gone), kept after recovery for status tools. */
  lastError?: string;
  lastErrorAt?: number;
  /** Consecutive failed attempts since the link was last open. */
  attempts: number;
  /** When the next attempt is due (wall ms), while retrying. */
  nextAttemptAt?: number;
  bytes: number;
  openedAt?: number;
  /** Times the link was open again after being lost (sources that reconnect count them). */
  reconnects?: number;
}

export interface NmeaSource {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Raw bytes as they arrive; lines are split (with the maximum length) by the pipeline. */
  onData(listener: (chunk: Buffer) => void): void;
  link(): LinkState;
  /** What the source itself says of the receiver beside its NMEA (gpsd's antenna and jamming fields). */
  onReceiverReport?(listener: (report: GpsdReceiverReport) => void): void;
}
