import type { Fix } from '../fix/fix.js';

/**
 * Where `location here` gets its fixes. Two implementations: straight from a GNSS source
 * (gnss-feed.ts: the configured serial port or replay file, through the GNSS pipeline), and from
 * the running daemon over its local status socket (daemon-feed.ts), because while the daemon runs
 * it holds the serial port and a second reader would steal its bytes.
 */
export interface FixFeed {
  /** Where the fixes come from, for messages: "replay of /x.nmea", "the running daemon (...)". */
  readonly description: string;
  /**
   * Every fix the receiver reports (not yet quality-gated), in order, until the source ends or
   * `signal` aborts; the iterator's return() releases the source.
   */
  fixes(signal: AbortSignal): AsyncIterable<Fix>;
  /** Why nothing may have arrived (the link's last error), for the "no fix" message. */
  diagnose?(): string | undefined;
}
