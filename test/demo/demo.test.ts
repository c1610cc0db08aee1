import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/paths.js';
import { runCli } from '../helpers/run-cli.js';

// The demo drives the real `run` daemon; until that command exists the end-to-end test cannot run.
const haveRun = spawnSync(process.execPath, [CLI, 'run', '--help'], { encoding: 'utf8' }).status === 0;
if (!haveRun) process.stderr.write('skipping the demo test: dist/cli/main.js has no `run` command yet\n');

interface Frame {
  text: string;
  phase: string;
  queued: number | undefined;
}

/** The plain (not a terminal) output's frames: each starts with its header line `demo m:ss · ...`. */
function frames(out: string): Frame[] {
  return out
    .split(/^(?=demo \d+:\d\d · )/m)
    .filter((f) => f.startsWith('demo '))
    .map((f) => {
      const text = f.split(/^demo summary$/m)[0]!.trimEnd();
      const queued = /^recorded \S+ {2}queued (\d+)/m.exec(text)?.[1];
      return {
        text,
        phase: / · ([^·\n]+)$/m.exec(text.split('\n')[0]!)?.[1] ?? '',
        queued: queued === undefined ? undefined : Number(queued),
      };
    });
}

describe('demo', () => {
  it.skipIf(!haveRun)(
    'fast mode, not a terminal: plain status frames, the outage buffers then drains, every fix delivered once, one password grant',
    async () => {
      // 4 minutes hold the depot's stop (90 s at least); at 20x the outage (4 s of wall time at
      // least) leaves no fix pending 120 s of GNSS time, whose alert would make a frame 25 lines.
      const run = await runCli(['demo', '--minutes', '4', '--speed', '20'], { timeoutMs: 120_000 });
      const r = { code: run.code, out: run.stdout + run.stderr };
      expect(r.code, r.out).toBe(0);
      // A pipe gets no cursor movement and no colour.
      expect(r.out.includes('\u001b')).toBe(false);

      const all = frames(r.out);
      expect(all.length, r.out).toBeGreaterThanOrEqual(3);
      for (const f of all) {
        const lines = f.text.split('\n');
        expect(lines.length, f.text).toBeLessThanOrEqual(24);
        for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(80);
        expect(lines[1], f.text).toMatch(/^recorded \S+ {2}queued \S+ {2}uploaded \d+ {2}token refreshes \d+ {2}password grants \d+$/);
      }
      // The status screen of `telematics-agent status` under the header: fix and satellites.
      const live = all.filter((f) => /^ {2}fix\s+3D\s+52\.\d+ N 5\.\d+ E/m.test(f.text));
      expect(live.length, r.out).toBeGreaterThanOrEqual(2);
      for (const f of live) {
        expect(f.text).toMatch(/^telematics-agent \S+ · running, pid \d+/m);
        expect(f.text).toMatch(/^ {2}sats\s+used [1-9]\d*\s+GPS \d+\/\d+/m);
        expect(f.text).toMatch(/^outbox\s+pending \d+/m);
        expect(f.text).toMatch(/^upload\s+recorded \d+\s+sent today \d+/m);
      }

      // The outage shows: queued when it was injected, more when the platform came back, none at the end.
      const outage = all.findIndex((f) => f.phase.startsWith('platform outage injected'));
      const back = all.findIndex((f) => f.phase.startsWith('platform back: draining'));
      expect(outage, r.out).toBeGreaterThanOrEqual(0);
      expect(back, r.out).toBeGreaterThan(outage);
      expect(all[back]!.queued!, r.out).toBeGreaterThan(all[outage]!.queued!);
      // While the 503s last the link fails (said with its cause); once it answers again the upload error remains.
      expect(all[back]!.text).toMatch(/^! (upload failing: PLATFORM_UNAVAILABLE \(transient\)$|platform answers HTTP 503 for \d+ s)/m);
      // The platform answers 503: never "not answering", never a fractional count of requests in flight.
      for (const f of all) expect(f.text).not.toMatch(/not answering|\b0\.\d+ of \d+ in flight/);
      const end = all.at(-1)!;
      expect(end.queued, end.text).toBe(0);
      expect(end.text).not.toMatch(/FAILING$/m);

      const figure = (name: string): number => Number(new RegExp(`^  ${name}\\s+(\\d+)`, 'm').exec(r.out)?.[1]);
      // Counted before the stop: deciding late, the last ~20 s of path wait in the policy's window
      // until the stop records them, so this 4-minute drive counts 9 here where deciding at once counted 12.
      expect(figure('recorded')).toBeGreaterThanOrEqual(8);
      expect(figure('delivered')).toBe(figure('recorded'));
      expect(figure('duplicates')).toBe(0);
      expect(figure('password grants')).toBe(1);
      expect(figure('outage refusals')).toBeGreaterThan(0);
      expect(Number(/backlog peaked at (\d+) fix(?:es)?,/.exec(r.out)?.[1])).toBeGreaterThanOrEqual(all[back]!.queued!);
      // The last frame's header agrees with the summary.
      expect(end.text).toMatch(new RegExp(`^recorded ${figure('recorded')} {2}queued 0 {2}uploaded ${figure('delivered')} `, 'm'));
      expect(r.out).toMatch(/result: every recorded fix delivered exactly once/);
      // The trips of the drive as the platform received them: the depot stop (at least 90 s at any
      // --minutes) is one stop and one start, each with the odometer.
      expect(r.out).toMatch(/^ {2}trips\s+2 events:$/m);
      // The ignition the demo switched: off at the depot, on before it leaves, each one engine event.
      expect(r.out).toMatch(/^ {2}engine\s+2 events for 2 ignition changes \(off at the depot, on to leave\):$/m);
      const listed = [
        ...r.out.matchAll(/^ {4}(\d\d:\d\d:\d\d)Z {2}(\w+) +52\.\d{5}, 5\.\d{5} {2}odometer (\d+\.\d\d) km(?: {2}engine \d+\.\d h)?$/gm),
      ];
      expect(
        listed.map((m) => m[2]),
        r.out,
      ).toEqual(['stopMovingEvent', 'startMovingEvent', 'stopEngineEvent', 'startEngineEvent']);
      const at = (type: string): string => listed.find((m) => m[2] === type)![1]!;
      expect(at('startMovingEvent') > at('stopMovingEvent')).toBe(true);
      // The engine goes off once the vehicle stands, and on again while it still stands.
      expect(at('stopEngineEvent') > at('stopMovingEvent'), r.out).toBe(true);
      expect(at('startEngineEvent') > at('stopEngineEvent'), r.out).toBe(true);
      expect(r.out).toMatch(
        /^result: every recorded fix delivered exactly once, one password grant, every ignition change an engine event$/m,
      );
      // Why so few fixes became events, and what to try next.
      expect(r.out).toMatch(
        new RegExp(
          `^why ${figure('recorded')} of ${figure('fixes read')}: recording.mode "path" keeps the fixes where the track bends more than 10 m`,
          'm',
        ),
      );
      expect(r.out).toMatch(/^next: .*The agent against the simulator.*telematics-agent status --watch/m);
    },
  );
});
