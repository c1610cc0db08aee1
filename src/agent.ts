import { describeError, errorFields, isCorrupt } from './errors.js';
import type { GnssPipeline } from './gnss/pipeline.js';
import { agentPipeline } from './gnss/agent-pipeline.js';
import { FixPublisher } from './socket/fix-publisher.js';
import { buildPlatform } from './platform/build.js';
import { WIRE_META_KEY, WireCounter, type WireUsage } from './platform/transport/wire-counter.js';
import { readStoredFacts } from './status/stored-facts.js';
import { agentCounts, type AgentCounts } from './status/agent-status.js';
import { startDaemonStatus } from './status/daemon-status-server.js';
import { saveLastUploadError } from './status/upload-facts.js';
import { Ballast } from './store/ballast.js';
import { StoreSupervisor } from './store/store-supervisor.js';
import type { StoreSwap } from './store/store-swap.js';
import { StoreHandle } from './store/store-handle.js';
import { WatchdogPings } from './system/watchdog-pings.js';
import { FullDisk } from './store/full-disk.js';
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
 * The composition root of `telematics-agent run`, the one place that wires the parts, so that a
 * reader finds every dependency here: builds every component from the frozen configuration once,
 * starts them in dependency order (store, tokens, registration, outbox, uploader, status, GNSS) and
 * stops them in reverse, each stop on its own, so that a signal during start-up is clean. The
 * components hold the store through a handle (store/store-handle.ts), to which store/store-swap.ts
 * attaches each database: a salvage or a read-only card's recovery swaps the database under them
 * when store/store-supervisor.ts decides, and none of them restarts. Only configuration errors end the process.
 */
export class Agent {
  readonly #options: AgentOptions;
  readonly #clock: Clock;
  readonly #notify: SdNotify;
  readonly #stops: { name: string; stop: () => Promise<void> | void }[] = [];
  readonly #startedMono: number;
  /** The database of the moment, under the record interfaces and the queue the components hold. */
  readonly #handle: StoreHandle;
  #counted: { pipeline: GnssPipeline; uploader: Uploader } | undefined;
  readonly #fullDisk: FullDisk;
  readonly #watchdog: WatchdogPings;
  /** When the store is swapped, and to which database (store/store-supervisor.ts). */
  readonly #supervisor: StoreSupervisor;
  /** The swap's steps: the first open and the final stop are the agent's (store/store-swap.ts). */
  readonly #swap: StoreSwap;
  /** Host wall clock when the last epoch was decoded: status compares it with the fix's GNSS time. */
  #lastEpochWallMs: number | undefined;
  /** The receiver's clock: the last epoch's GNSS time and when (monotonic) it was decoded. */
  #lastEpoch: { gnssMs: number; monoMs: number } | undefined;
  #stopping: Promise<void> | undefined;
  readonly #fixPublisher = new FixPublisher();
  #pipeline: GnssPipeline | undefined;
  /** Movement, engine and odometer: like the pipeline, it outlives a restart of the store. */
  readonly #motion: MotionTracker | undefined;
  /** start() finished: from here a restart of the store swaps only the database. */
  #started = false;
  /** The last salvage as the open database records it (status). */
  #repaired: ReturnType<typeof repairedFacts>;

  constructor(options: AgentOptions) {
    this.#options = options;
    const { config, logger } = options;
    this.#clock = options.clock ?? systemClock;
    const clock = this.#clock;
    this.#notify = new SdNotify({ env: options.env ?? process.env, logger: logger.child({ component: 'sd-notify' }) });
    this.#startedMono = clock.monotonicMs();
    this.#handle = new StoreHandle(logger.child({ component: 'gnss' }));
    this.#watchdog = new WatchdogPings({
      notify: this.#notify,
      logger,
      dataDir: config.dataDir,
      commitState: () => this.#handle.parts?.outbox?.commitState(),
      readOnly: () => this.#supervisor.readOnly,
      restarting: () => this.#supervisor.restarting,
      monotonicMs: () => clock.monotonicMs(),
    });
    const storeLogger = logger.child({ component: 'store' });
    const fullDisk = new FullDisk({
      ballast: new Ballast({ dataDir: config.dataDir, bytes: config.storage.ballastBytes, logger: storeLogger }),
      dataDir: config.dataDir,
      clock,
      logger: storeLogger,
    });
    this.#fullDisk = fullDisk;
    this.#supervisor = new StoreSupervisor({
      dataDir: config.dataDir,
      logger,
      locks: options.locks,
      readOnlyCheckMs: options.readOnlyCheckMs,
      components: {
        start: () => this.#start(),
        started: () => this.#started,
        stop: () => this.#stopComponents({ keepGnss: true }),
        stopping: () => this.#stopping !== undefined,
      },
      store: {
        handle: this.#handle,
        fullDisk,
        storage: config.storage,
        dataDir: config.dataDir,
        clock,
        logger,
        storeLogger,
        onProgress: () => this.#watchdog.duringWork('salvaging the damaged database'),
        onStores: (stores) => {
          this.#repaired = repairedFacts(stores.meta);
        },
      },
    });
    this.#swap = this.#supervisor.swap;
    this.#motion = buildMotion({
      config,
      logger,
      clock,
      lastEpoch: () => this.#lastEpoch,
      ...(options.gpiodTools ? { gpiodTools: options.gpiodTools } : {}),
    });
  }

  /**
   * Starts every component. A damaged database found while starting (a token or identity read)
   * is not a failure to start: the salvage it set off (StoreSupervisor.onDamage) starts everything again.
   */
  start(): Promise<void> {
    const starting = this.#supervisor.startFirst();
    this.#supervisor.starting = starting;
    return starting.catch((e: unknown) => {
      if (isCorrupt(e) && this.#supervisor.repairing) return this.#supervisor.repairing;
      throw e;
    });
  }

  async #start(): Promise<void> {
    const { config, logger } = this.#options;
    const clock = this.#clock;
    const handle = this.#handle;

    // A read-only card: a copy of its database in memory, what is recorded held, delivered if a
    // token and registration are stored, stored once the card takes writes (store-supervisor.ts).
    this.#swap.open();
    this.#swap.attach();
    this.#onStop('store', () => this.#swap.stop());
    const meta = handle.stores.meta;
    // The data counter continues today's and this month's figures across restarts.
    const wire = new WireCounter(clock);
    try {
      wire.load(meta.getJson<WireUsage>(WIRE_META_KEY));
    } catch (e) {
      logger.warn({ err: describeError(e) }, 'stored data counter unreadable; counting from zero');
    }

    // Built over the handle's records: a swap of the database is nothing the platform sees.
    const platform = buildPlatform({
      config,
      records: handle.stores,
      logger,
      clock,
      wire,
      spreadStart: true,
      // A replayed file's GNSS times are from another day: only a live receiver tells the clock's error.
      ...(config.gnss.replayFile === undefined ? { clockOffsetMs: () => gnssClockOffsetMs(clock, this.#lastEpoch) } : {}),
      ...(this.#options.probes ? { probes: this.#options.probes } : {}),
      ...(this.#options.bootClock ? { bootClock: this.#options.bootClock } : {}),
      ...(this.#options.tuning?.platform ? { tuning: this.#options.tuning.platform } : {}),
    });
    this.#onStop('platform', () => platform.stop());
    await platform.start();
    // Known before registration (hardware serial or configuration): event ids are fixed at record time.
    const identity = await platform.registrar.identity();
    await this.#swap.resume({ platform, persistWithCounters: (m) => m.setJson(WIRE_META_KEY, wire.usage()) });
    const motion = this.#motion;
    if (motion) {
      motion.attach(handle.queue, meta);
      this.#onStop('motion', () => motion.detach());
    }

    const eventsOrigin = new URL(config.platform.planningUrl).origin;
    const uploader = new Uploader({
      queue: handle.queue,
      requester: platform.requester,
      registration: platform.registrar,
      eventsUrl: `${config.platform.planningUrl}${config.platform.eventsPath}`,
      ...(config.device.licensePlate !== undefined ? { licensePlate: config.device.licensePlate } : {}),
      upload: config.upload,
      backoff: { ...UPLOAD_BACKOFF, ...this.#options.tuning?.upload },
      clock,
      logger: logger.child({ component: 'upload' }),
      // Over HTTP/1.1 the dispatcher runs platform.maxConnections at once; over h2, streams.
      slots: () => (wire.protocolOf(eventsOrigin) === 'http/1.1' ? config.platform.maxConnections : Infinity),
    });
    // Runs after the uploader stopped (stops go newest first), so its last grace-time answers count.
    this.#onStop('upload facts', () => saveLastUploadError(meta, uploader.status().lastError));
    await uploader.start();
    this.#onStop('uploader', () => uploader.stop(this.#options.shutdownGraceMs ?? 3000));

    // The pipeline outlives a start that failed half-way (its fixes wait in the handle's queue).
    const pipeline = this.#pipeline ?? this.#buildPipeline();
    const status = await startDaemonStatus({
      config,
      logger,
      fixes: this.#fixPublisher,
      sources: {
        config,
        clock,
        startedMonoMs: this.#startedMono,
        parts: { pipeline, platform, outbox: handle.outbox, uploader },
        lastEpochWallMs: () => this.#lastEpochWallMs,
        lastEpoch: () => this.#lastEpoch,
        ballastPresent: () => this.#fullDisk.state().ballastPresent,
        repaired: () => this.#repaired,
        stored: readStoredFacts(handle.stores),
        motion: motion && (() => motion.status()),
      },
    });
    if (status) this.#onStop('status', () => status.stop());
    this.#counted = { pipeline, uploader };

    if (!this.#pipeline) {
      this.#pipeline = pipeline;
      await pipeline.start();
      await this.#motion?.start();
      // Stop reading first, then commit what is buffered before the uploader gets its grace time.
      this.#onStop('gnss', async () => {
        await pipeline.stop();
        this.#motion?.stop();
        this.#pipeline = undefined;
        this.#handle.parts?.outbox?.flush();
      });
    }
    this.#started = true;

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

  /** Recorded fixes to the outbox of the moment (the handle's queue); every decoded epoch to the status socket. */
  #buildPipeline(): GnssPipeline {
    const clock = this.#clock;
    return agentPipeline({
      config: this.#options.config,
      logger: this.#options.logger,
      clock,
      source: this.#options.source,
      sink: this.#handle.queue,
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
    const c = this.#counted;
    return c ? agentCounts({ outbox: this.#handle.outbox, ...c }) : undefined;
  }

  /** Stops everything started, newest first; each step on its own so one failure stops no other. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      this.#notify.stopping();
      await this.#supervisor.repairing?.catch(() => undefined);
      this.#supervisor.stopWatch();
      await this.#stopComponents();
      await this.#notify.flush();
      this.#options.logger.info('agent stopped');
    })();
    return this.#stopping;
  }

  async #stopComponents(options: { keepGnss?: boolean } = {}): Promise<void> {
    // A start that failed half-way keeps the pings (they say what the store does); only the final stop ends them.
    if (!options.keepGnss) this.#watchdog.stop();
    // Newest first, but the receiver always first of all (it was started once, before any restart).
    const steps = [...this.#stops].reverse().sort((a, b) => Number(b.name === 'gnss') - Number(a.name === 'gnss'));
    const kept = options.keepGnss ? steps.filter((s) => s.name === 'gnss') : [];
    for (const step of steps) {
      if (kept.includes(step)) continue;
      try {
        await step.stop();
      } catch (e) {
        this.#options.logger.warn({ component: step.name, err: errorFields(e) }, 'stop step failed; going on');
      }
    }
    this.#stops.length = 0;
    this.#stops.push(...kept);
  }

  #onStop(name: string, stop: () => Promise<void> | void): void {
    this.#stops.push({ name, stop });
  }
}
