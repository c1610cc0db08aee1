import { describeError, errorFields, isCorrupt } from './errors.js';
import type { GnssPipeline } from './gnss/pipeline.js';
import { agentPipeline } from './gnss/agent-pipeline.js';
import { FixPublisher } from './socket/fix-publisher.js';
import type { Logger } from './log.js';
import { buildPlatform, type PlatformParts } from './platform/build.js';
import { WIRE_META_KEY, WireCounter, type WireUsage } from './platform/transport/wire-counter.js';
import { readStoredFacts } from './status/stored-facts.js';
import { agentCounts, type AgentCounts } from './status/agent-status.js';
import { startDaemonStatus } from './status/daemon-status-server.js';
import { saveLastUploadError } from './status/upload-facts.js';
import { Ballast } from './store/ballast.js';
import type { OpenDatabaseOptions } from './store/database.js';
import { StoreSupervisor } from './store/store-supervisor.js';
import { storeCarriedPair } from './platform/auth/unsaved-pair.js';
import { FixHandover } from './fix/fix-handover.js';
import { WatchdogPings } from './system/watchdog-pings.js';
import { FullDisk } from './store/full-disk.js';
import { openStores } from './store/stores.js';
import { Outbox } from './store/outbox/outbox.js';
import { systemClock, type Clock } from './system/clock.js';
import { gnssClockOffsetMs } from './system/clock-offset.js';
import { SdNotify } from './system/sd-notify.js';
import { repairedFacts } from './status/store-view.js';
import { Uploader } from './upload/uploader.js';
import { UPLOAD_BACKOFF } from './upload/retry-decision.js';
import { replacedKeyWarnings } from './config/warnings.js';
import type { AgentOptions } from './agent-options.js';
import { buildMotion } from './motion/agent-motion.js';
import type { MotionTracker } from './motion/motion-tracker.js';

export type { AgentOptions } from './agent-options.js';

/**
 * The composition root of `telematics-agent run` (STYLE.md "Shape of the daemon"): builds every
 * component from the frozen configuration, starts them in dependency order (store, tokens,
 * registration, outbox, uploader, status, GNSS) and stops them in reverse, each stop on its own, so
 * that a signal during start-up is clean. Components supervise themselves (serial reconnects,
 * registration and upload backoff, commit retries); only configuration errors end the process.
 */
export class Agent {
  readonly #o: AgentOptions;
  readonly #clock: Clock;
  readonly #notify: SdNotify;
  readonly #stops: { name: string; stop: () => Promise<void> | void }[] = [];
  readonly #startedMono: number;
  #outbox: Outbox | undefined;
  #counted: { pipeline: GnssPipeline; uploader: Uploader } | undefined;
  #fullDisk: FullDisk | undefined;
  readonly #watchdog: WatchdogPings;
  /** Open, salvage, read-only copy, recovery: the store's restart path (store/store-supervisor.ts). */
  readonly #store: StoreSupervisor;
  /** Host wall clock when the last epoch was decoded: status compares it with the fix's GNSS time. */
  #lastEpochWallMs: number | undefined;
  /** The receiver's clock: the last epoch's GNSS time and when (monotonic) it was decoded. */
  #lastEpoch: { gnssMs: number; monoMs: number } | undefined;
  #stopping: Promise<void> | undefined;
  /** The receiver's fixes, to the outbox of the moment: the GNSS pipeline outlives a restart of the store. */
  readonly #handover: FixHandover;
  readonly #fixPublisher = new FixPublisher();
  #pipeline: GnssPipeline | undefined;
  /** Movement, engine and odometer: like the pipeline, it outlives a restart of the store. */
  readonly #motion: MotionTracker | undefined;
  #platform: PlatformParts | undefined;

  constructor(options: AgentOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#notify = new SdNotify({ env: options.env ?? process.env, logger: options.logger.child({ component: 'sd-notify' }) });
    this.#startedMono = this.#clock.monotonicMs();
    this.#handover = new FixHandover(options.logger.child({ component: 'gnss' }));
    this.#watchdog = new WatchdogPings({
      notify: this.#notify,
      logger: options.logger,
      dataDir: options.config.dataDir,
      commitState: () => this.#outbox?.commitState(),
      readOnly: () => this.#store.readOnly,
      restarting: () => this.#store.restarting,
      monotonicMs: () => this.#clock.monotonicMs(),
    });
    this.#store = new StoreSupervisor({
      dataDir: options.config.dataDir,
      logger: options.logger,
      locks: options.locks,
      readOnlyCheckMs: options.readOnlyCheckMs,
      run: {
        start: () => this.#start(),
        stop: () => this.#stopComponents({ keepGnss: true }),
        release: () => this.#outbox?.release(),
        outbox: () => this.#outbox,
        detachReceiver: () => this.#handover.detach(),
        unsavedPair: () => this.#platform?.tokens.unsavedPair(),
        stopping: () => this.#stopping !== undefined,
        onStop: (name, stop) => this.#onStop(name, stop),
      },
    });
    this.#motion = buildMotion({
      config: options.config,
      logger: options.logger,
      clock: this.#clock,
      lastEpoch: () => this.#lastEpoch,
      ...(options.gpiodTools ? { gpiodTools: options.gpiodTools } : {}),
    });
  }

  /**
   * Starts every component. A damaged database found while starting (a token or identity read)
   * is not a failure to start: the salvage it set off (StoreSupervisor.onDamage) starts everything again.
   */
  start(): Promise<void> {
    const starting = this.#store.startFirst();
    this.#store.starting = starting;
    return starting.catch((e: unknown) => {
      if (isCorrupt(e) && this.#store.repairing) return this.#store.repairing;
      throw e;
    });
  }

  async #start(): Promise<void> {
    const { config, logger } = this.#o;
    const clock = this.#clock;

    const storeLogger = logger.child({ component: 'store' });
    const fullDisk = new FullDisk({
      ballast: new Ballast({ dataDir: config.dataDir, bytes: config.storage.ballastBytes, logger: storeLogger }),
      dataDir: config.dataDir,
      clock,
      logger: storeLogger,
    });
    this.#fullDisk = fullDisk;
    const dbOptions: OpenDatabaseOptions = {
      dataDir: config.dataDir,
      clock,
      logger: storeLogger,
      // Whichever writer meets the full disk first (outbox, token lock, token pair) releases the ballast for all.
      // Whichever reader or writer meets a damaged page (commit, token read, outbox read) has the file salvaged.
      onFault: (kind, e) => {
        if (kind === 'disk-full') fullDisk.enter({ code: e.sqliteCode, message: e.message });
        else this.#store.onDamage(e);
      },
      onProgress: () => this.#watchdog.duringWork('salvaging the damaged database'),
    };
    // A read-only card: a copy of its database in memory, what is recorded held, delivered if a
    // token and registration are stored, stored once the card takes writes (store-supervisor.ts).
    const { db, readOnly, adopt } = this.#store.open(dbOptions, storeLogger);
    if (!readOnly) fullDisk.start();
    this.#onStop('database', () => {
      db.close();
    });
    // Every record store over this database, built once here and handed over as interfaces.
    const stores = openStores(db);
    const meta = stores.meta;
    // The server rotated the card's refresh token during the spell: the pair it gave instead goes in
    // first, or, back on the read-only copy after a failed recovery, is held by the new platform.
    const carryTokens = this.#store.carriedTokens();
    if (!readOnly && carryTokens) {
      const stored = storeCarriedPair(stores.tokens, carryTokens);
      storeLogger.info(
        { generation: carryTokens.generation, stored },
        'stored the token pair received while the data directory was read-only',
      );
      this.#store.tokensStored();
    }
    // The data counter continues today's and this month's figures across restarts.
    const wire = new WireCounter(clock);
    try {
      wire.load(meta.getJson<WireUsage>(WIRE_META_KEY));
    } catch (e) {
      logger.warn({ err: describeError(e) }, 'stored data counter unreadable; counting from zero');
    }

    const platform = buildPlatform({
      config,
      records: stores,
      logger,
      clock,
      wire,
      spreadStart: true,
      // A replayed file's GNSS times are from another day: only a live receiver tells the clock's error.
      ...(config.gnss.replayFile === undefined ? { clockOffsetMs: () => gnssClockOffsetMs(clock, this.#lastEpoch) } : {}),
      ...(this.#o.probes ? { probes: this.#o.probes } : {}),
      ...(this.#o.bootClock ? { bootClock: this.#o.bootClock } : {}),
      ...(this.#o.tuning?.platform ? { tuning: this.#o.tuning.platform } : {}),
    });
    this.#platform = platform;
    if (readOnly && carryTokens) platform.tokens.carryIn(carryTokens);
    this.#onStop('platform', () => platform.stop());
    await platform.start();
    // Known before registration (hardware serial or configuration): event ids are fixed at record time.
    const identity = await platform.registrar.identity();

    const outbox = new Outbox({
      db,
      meta,
      identity,
      storage: config.storage,
      dataDir: config.dataDir,
      clock,
      logger: logger.child({ component: 'outbox' }),
      fullDisk,
      persistWithCounters: (m) => m.setJson(WIRE_META_KEY, wire.usage()),
    });
    this.#outbox = outbox;
    await outbox.start();
    if (adopt) outbox.hold(adopt);
    this.#onStop('outbox', () => outbox.stop());
    const motion = this.#motion;
    if (motion) {
      motion.attach(outbox, meta);
      this.#onStop('motion', () => motion.detach());
    }

    const eventsOrigin = new URL(config.platform.planningUrl).origin;
    const uploader = new Uploader({
      queue: outbox,
      requester: platform.requester,
      registration: platform.registrar,
      eventsUrl: `${config.platform.planningUrl}${config.platform.eventsPath}`,
      ...(config.device.licensePlate !== undefined ? { licensePlate: config.device.licensePlate } : {}),
      upload: config.upload,
      backoff: { ...UPLOAD_BACKOFF, ...this.#o.tuning?.upload },
      clock,
      logger: logger.child({ component: 'upload' }),
      // Over HTTP/1.1 the dispatcher runs platform.maxConnections at once; over h2, streams.
      slots: () => (wire.protocolOf(eventsOrigin) === 'http/1.1' ? config.platform.maxConnections : Infinity),
    });
    // Runs after the uploader stopped (stops go newest first), so its last grace-time answers count.
    this.#onStop('upload facts', () => saveLastUploadError(meta, uploader.status().lastError));
    await uploader.start();
    this.#onStop('uploader', () => uploader.stop(this.#o.shutdownGraceMs ?? 3000));

    // The pipeline outlives a restart of the store (its fixes wait in the handover meanwhile).
    const pipeline = this.#pipeline ?? this.#buildPipeline();
    const status = await startDaemonStatus({
      config,
      logger,
      fixes: this.#fixPublisher,
      sources: {
        config,
        clock,
        startedMonoMs: this.#startedMono,
        parts: { pipeline, platform, outbox, uploader },
        lastEpochWallMs: () => this.#lastEpochWallMs,
        lastEpoch: () => this.#lastEpoch,
        ballastPresent: () => this.#fullDisk?.state().ballastPresent,
        repaired: repairedFacts(meta),
        stored: readStoredFacts(stores),
        motion: motion && (() => motion.status()),
      },
    });
    if (status) this.#onStop('status', () => status.stop());
    this.#counted = { pipeline, uploader };
    this.#handover.attach(outbox);
    this.#onStop('outbox hand-over', () => this.#handover.detach());

    if (!this.#pipeline) {
      this.#pipeline = pipeline;
      await pipeline.start();
      await this.#motion?.start();
      // Stop reading first, then commit what is buffered before the uploader gets its grace time.
      this.#onStop('gnss', async () => {
        await pipeline.stop();
        this.#motion?.stop();
        this.#pipeline = undefined;
        this.#outbox?.flush();
      });
    }

    this.#notify.ready('recording');
    this.#watchdog.start();
    logger.info(
      {
        dataDir: config.dataDir,
        externalDeviceId: identity.externalDeviceId,
        gnss: config.gnss.replayFile ?? config.gnss.gpsd ?? config.gnss.path,
      },
      'agent running',
    );
    for (const w of replacedKeyWarnings(config)) logger.warn({ key: w.path }, w.message);
  }

  /** Recorded fixes to the outbox of the moment (the handover); every decoded epoch to the status socket. */
  #buildPipeline(): GnssPipeline {
    const clock = this.#clock;
    return agentPipeline({
      config: this.#o.config,
      logger: this.#o.logger,
      clock,
      source: this.#o.source,
      sink: this.#handover,
      onEpoch: (fix) => {
        this.#lastEpochWallMs = clock.wallMs();
        this.#lastEpoch = { gnssMs: fix.time, monoMs: clock.monotonicMs() };
        this.#fixPublisher.publish(fix);
      },
      onAccepted: this.#motion && ((fix) => this.#motion!.offer(fix)),
    });
  }

  /**
   * A few counters without the status socket (bench:fleet watches a thousand agents in one process).
   * Undefined before start.
   */
  counts(): AgentCounts | undefined {
    const outbox = this.#outbox;
    const c = this.#counted;
    return outbox && c ? agentCounts({ outbox, ...c }) : undefined;
  }

  /** Stops everything started, newest first; each step on its own so one failure stops no other. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      this.#notify.stopping();
      await this.#store.repairing?.catch(() => undefined);
      await this.#stopComponents();
      await this.#notify.flush();
      this.#o.logger.info('agent stopped');
    })();
    return this.#stopping;
  }

  async #stopComponents(options: { keepGnss?: boolean } = {}): Promise<void> {
    // A restart of the store keeps the pings (they say what it does); only the final stop ends them.
    if (!options.keepGnss) this.#watchdog.stop();
    // Newest first, but the receiver always first of all (it was started once, before any restart).
    const steps = [...this.#stops].reverse().sort((a, b) => Number(b.name === 'gnss') - Number(a.name === 'gnss'));
    const kept = options.keepGnss ? steps.filter((s) => s.name === 'gnss') : [];
    for (const step of steps) {
      if (kept.includes(step)) continue;
      try {
        await step.stop();
      } catch (e) {
        this.#o.logger.warn({ component: step.name, err: errorFields(e) }, 'stop step failed; going on');
      }
    }
    this.#stops.length = 0;
    this.#stops.push(...kept);
  }

  #onStop(name: string, stop: () => Promise<void> | void): void {
    this.#stops.push({ name, stop });
  }
}
