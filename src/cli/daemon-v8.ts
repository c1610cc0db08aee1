import { setFlagsFromString } from 'node:v8';

/**
 * V8 settings for `run`, set before the daemon loads anything (NODE_OPTIONS refuses the flag).
 * `--liftoff-only`: undici parses HTTP/1.1 with llhttp in WebAssembly, which V8 compiled with
 * Liftoff, then again with TurboFan in the background at the first request: peak RSS 99 instead
 * of 64 MB for undici alone, 10 MB of it kept. Liftoff's code parses a few answers a second as
 * well. (`--lite-mode` saved 12 MB more but implies `--jitless`, which set at run time crashed V8
 * at the WebAssembly compile, and which undici's parser cannot run under at all.)
 */
export function tuneV8ForDaemon(): void {
  setFlagsFromString('--liftoff-only');
}
