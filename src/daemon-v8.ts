import { setFlagsFromString } from 'node:v8';

/**
 * V8 settings for `run`, set before the daemon loads anything (NODE_OPTIONS refuses these flags).
 * The systemd unit gives the same flags on node's command line, where they act from the start: on
 * Node 24, set here they came too late (peak 112 MB instead of 81, undici's parser still went to
 * TurboFan; start 88 MB instead of 77). These stay for a daemon started otherwise (by hand, the demo).
 * Measured with bench:footprint (docs/decisions/daemon-memory.md):
 * - `--liftoff-only`: undici parses HTTP/1.1 with llhttp in WebAssembly, which V8 compiled with
 *   Liftoff, then again with TurboFan at the first request: the daemon's peak 119 -> 81-86 MB
 *   (undici alone: 99 -> 64 MB). Liftoff's code parses a few answers a second as well.
 * - `--no-opt`: no TurboFan for JavaScript either (the daemon is ~0.6 % of a core, mostly SQLite
 *   and the kernel): 4-5 MB less RSS for +5 % CPU (0.63 -> 0.66 % of a core). Sparkplug stays:
 *   without it 1 MB less for +22 % CPU.
 * - `--no-maglev`: Node 22 and 24 have Maglev, a second optimising JIT that `--no-opt` (TurboFan
 *   only) leaves on (Node 20's V8 has it off already).
 * (`--lite-mode` saved more but implies `--jitless`, under which undici's parser cannot run, and
 * set at run time it crashed V8 at the WebAssembly compile.)
 */
export function tuneV8ForDaemon(): void {
  setFlagsFromString('--liftoff-only');
  setFlagsFromString('--no-opt');
  setFlagsFromString('--no-maglev');
}
