/**
 * The GNSS pipeline, assembled: source -> lines -> sentences -> epochs -> quality gate ->
 * recording policy -> sink. Built by the composition root; the constructor only assigns.
 */
import { systemClock, type Clock } from '../system/clock.js';
import type { Logger } from '../log.js';
import { createDecoder, type Decoder, type DecoderCounters } from './decoder.js';
import type { Fix, FixSink, RecordedFix, SatelliteInView } from '../fix/fix.js';
import { QualityGate, type QualityCounters, type QualityGateOptions } from './quality-gate.js';
import { RecordingPolicy, type RecordingPolicyOptions } from './recording-policy.js';
import { WeekRolloverCorrector, type RolloverCounters } from './rollover.js';
import type { LinkState, NmeaSource } from './sources/source.js';
import { errorFields } from '../errors.js';
import { CONFIG_DEFAULTS } from '../config/defaults.js';
import { ReceiverHealth, type ReceiverHealthState } from './health/receiver-health.js';

export interface GnssPipelineOptions {
  source: NmeaSource;
  logger: Logger;
  sink: FixSink;
  quality?: Partial<QualityGateOptions>;
  recording?: Partial<RecordingPolicyOptions>;
  /** Config `gnss.maxLineLength`. */
  maxLineLength?: number;
  /**
   * The host's clocks (default the system's): the wall clock bounds the week-rollover correction and
   * stamps the last valid sentence for display, the monotonic clock gives its age. Never used to
   * timestamp fixes: those come from GNSS.
   */
  clock?: Clock;
  /**
   * Every decoded epoch, before the gate and the recording policy (which would thin a standing
   * vehicle down to a heartbeat). `location here` subscribes to these through the daemon.
   */
  onEpoch?: (fix: Fix) => void;
  /** Every epoch the quality gate accepts, before the recording policy thins them (src/motion). */
  onAccepted?: (fix: Fix) => void;
}

export interface GnssState {
  /** lastValidSentenceAt: wall ms (display only); lastValidSentenceMonoMs: monotonic ms, for its age. */
  link: LinkState & { lines: number; lastValidSentenceAt?: number; lastValidSentenceMonoMs?: number };
  counters: { decoder: DecoderCounters; quality: QualityCounters; recorded: number; rollover: RolloverCounters };
  /** The last epoch decoded, even if rejected or not recorded (for status). */
  lastFix?: Fix;
  /** Why the last fix was rejected, if it was. */
  lastRejection?: string;
  satellites: SatelliteInView[];
  /** Antenna, signal strength, jamming. */
  health: ReceiverHealthState;
}

export class GnssPipeline {
  readonly #options: GnssPipelineOptions;
  readonly #decoder: Decoder;
  readonly #gate: QualityGate;
  readonly #policy: RecordingPolicy;
  readonly #rollover: WeekRolloverCorrector;
  readonly #health: ReceiverHealth;
  #recorded = 0;
  #lastFix: Fix | undefined;
  #lastRejection: string | undefined;
  #lastValidSentenceAt: number | undefined;
  #lastValidSentenceMono: number | undefined;
  readonly #clock: Clock;
  #decodedBefore = 0;
  #started = false;

  constructor(options: GnssPipelineOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    const quality = options.quality ?? {};
    this.#gate = new QualityGate(quality);
    this.#policy = new RecordingPolicy(options.recording ?? {});
    this.#health = new ReceiverHealth(options.logger);
    // The host clock only bounds a correction (never timestamps a fix): see rollover.ts.
    this.#rollover = new WeekRolloverCorrector({ ...quality, clock: this.#clock });
    this.#decoder = createDecoder({
      maxLineLength: options.maxLineLength ?? CONFIG_DEFAULTS.gnss.maxLineLength,
      // The sky for status only: fixes that carried it kept every epoch's view alive into old space.
      sky: true,
      // The live agent corrects the GPS week rollover (gpsd does the same); `nmea decode` does not.
      correctTime: this.#rollover.correct,
      onFix: (fix) => this.#onFix(fix),
      onText: (text) => this.#health.text(text),
    });
  }

  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    this.#options.source.onData((chunk) => this.#onData(chunk));
    this.#options.source.onReceiverReport?.((report) => this.#health.gpsd(report));
    await this.#options.source.start();
  }

  async stop(): Promise<void> {
    if (!this.#started) return;
    this.#started = false;
    await this.#options.source.stop();
    // What the policy still holds back (the path policy decides one fix late) is recorded, not lost.
    this.#recordAll(this.#policy.flush());
  }

  /** End of input (a replay file read to its end): the unterminated last line and the epoch in progress. */
  endOfInput(): void {
    if (this.#started) this.#decoder.flush();
  }

  /** Fixes recorded so far (state().counters.recorded without building the whole state). */
  recordedCount(): number {
    return this.#recorded;
  }

  state(): GnssState {
    const counters = this.#decoder.counters;
    const state: GnssState = {
      link: { ...this.#options.source.link(), lines: counters.lines.lines },
      counters: { decoder: counters, quality: this.#gate.counters, recorded: this.#recorded, rollover: { ...this.#rollover.counters } },
      satellites: this.#decoder.satellites(),
      health: this.#health.state(),
    };
    if (this.#lastValidSentenceAt !== undefined) state.link.lastValidSentenceAt = this.#lastValidSentenceAt;
    if (this.#lastValidSentenceMono !== undefined) state.link.lastValidSentenceMonoMs = this.#lastValidSentenceMono;
    if (this.#lastFix !== undefined) state.lastFix = this.#lastFix;
    if (this.#lastRejection !== undefined) state.lastRejection = this.#lastRejection;
    return state;
  }

  #onData(chunk: Buffer): void {
    if (!this.#started) return;
    try {
      this.#decoder.pushChunk(chunk);
    } catch (e) {
      // The decoder does not throw on input; this guards the agent against a bug, loudly.
      this.#options.logger.error({ err: errorFields(e) }, 'GNSS decoder failed on a chunk');
    }
    const decoded = this.#decodedTotal();
    if (decoded !== this.#decodedBefore) {
      this.#decodedBefore = decoded;
      this.#lastValidSentenceAt = this.#clock.wallMs();
      this.#lastValidSentenceMono = this.#clock.monotonicMs();
    }
  }

  #decodedTotal(): number {
    let n = 0;
    for (const v of Object.values(this.#decoder.counters.sentences.decoded)) n += v ?? 0;
    return n;
  }

  #onFix(fix: Fix): void {
    this.#lastFix = fix;
    this.#health.epoch(fix.time, this.#decoder.satellites());
    if (this.#options.onEpoch) {
      try {
        this.#options.onEpoch(fix);
      } catch (e) {
        this.#options.logger.error({ err: errorFields(e) }, 'an epoch listener failed');
      }
    }
    const rejection = this.#gate.check(fix);
    this.#lastRejection = rejection;
    if (rejection !== undefined) return;
    if (this.#options.onAccepted) {
      try {
        this.#options.onAccepted(fix);
      } catch (e) {
        this.#options.logger.error({ err: errorFields(e) }, 'an accepted-fix listener failed');
      }
    }
    this.#recordAll(this.#policy.offer(fix));
  }

  #recordAll(fixes: RecordedFix[]): void {
    for (const recorded of fixes) {
      this.#recorded++;
      try {
        this.#options.sink.record(recorded);
      } catch (e) {
        this.#options.logger.error({ err: errorFields(e) }, 'the fix sink failed to record a fix');
      }
    }
  }
}
