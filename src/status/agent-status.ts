import type { Config } from '../config/load.js';
import type { GnssPipeline } from '../gnss/pipeline.js';
import type { PlatformParts } from '../platform/build.js';
import type { OutboxView } from '../store/store-handle.js';
import type { Clock } from '../system/clock.js';
import type { Uploader } from '../upload/uploader.js';
import { DaemonStatusProvider, type StoredFacts } from './daemon-provider.js';
import type { DiskSummary, MotionSummary } from './snapshot.js';
import { storeView } from './store-view.js';
import { outboxSummary, uploadSummary, type AgeReference } from './upload-views.js';
import { headerIndexerNotes, platformLinkSummary } from './platform-link.js';

export interface AgentStatusOptions {
  config: Config;
  clock: Clock;
  startedMonoMs: number;
  parts: { pipeline: GnssPipeline; platform: PlatformParts; outbox: OutboxView; uploader: Uploader };
  /** Host wall clock when the last epoch was decoded: status compares it with the fix's GNSS time. */
  lastEpochWallMs: () => number | undefined;
  /** The last epoch's GNSS time and the monotonic ms it was decoded at: the receiver's "now". */
  lastEpoch?: () => { gnssMs: number; monoMs: number } | undefined;
  ballastPresent: () => boolean | undefined;
  /** The last salvage of the database as it records it (read again after each swap of the store). */
  repaired: () => DiskSummary['repaired'];
  stored: StoredFacts;
  /** The motion tracker's view (absent with motion.enabled false). */
  motion?: (() => MotionSummary) | undefined;
}

/** What the running agent's status socket answers with: each fact read from the component that owns it, at the moment of asking. */
export function daemonStatusProvider(o: AgentStatusOptions): DaemonStatusProvider {
  const { config, clock, startedMonoMs, lastEpochWallMs, ballastPresent, repaired, stored } = o;
  const { pipeline, platform, outbox, uploader } = o.parts;
  return new DaemonStatusProvider({
    clock,
    dataDir: config.dataDir,
    minFreeBytes: config.storage.minFreeBytes,
    startedMonoMs,
    stored: () => stored,
    receiver: () => {
      const g = pipeline.state();
      const lastEpoch = lastEpochWallMs();
      const sentenceMono = g.link.lastValidSentenceMonoMs;
      // A replayed file's GNSS times are from another day and run accelerated: comparing them
      // with the system clock would only ever report a clock problem that is not there.
      const live = config.gnss.replayFile === undefined;
      return {
        // The source says where it reads: the device, the file, or `gpsd 127.0.0.1:2947 -> /dev/ttyACM0`.
        port: g.link.path,
        link: g.link.status,
        ...(g.link.lastError !== undefined ? { lastError: g.link.lastError } : {}),
        bytes: g.link.bytes,
        lines: g.link.lines,
        fixesRead: g.counters.decoder.epochs.epochs,
        rolloverCorrections: g.counters.rollover.corrected,
        ...(g.link.reconnects !== undefined ? { reconnects: g.link.reconnects } : {}),
        // On the monotonic clock: a clock set from 1970 to now does not make the receiver silent for 56 years.
        ...(sentenceMono !== undefined ? { lastSentenceMonoMs: sentenceMono } : {}),
        ...(g.lastFix ? { lastFix: g.lastFix } : {}),
        ...(live && lastEpoch !== undefined ? { lastFixWallMs: lastEpoch } : {}),
        satellites: g.satellites,
        health: g.health,
      };
    },
    identity: () => platform.registrar.status().identity,
    registration: () => platform.registrar.current(),
    tokens: () => platform.tokens.tokenStatus(),
    outbox: () => {
      const epoch = o.lastEpoch?.();
      const now: AgeReference = epoch
        ? { ms: epoch.gnssMs + Math.max(0, clock.monotonicMs() - epoch.monoMs), basis: 'gnss' }
        : { ms: clock.wallMs(), basis: 'host clock' };
      return outboxSummary(outbox.status(), pipeline.state().counters.recorded, now);
    },
    store: () => ({
      ...storeView(outbox.commitState(), ballastPresent(), clock.monotonicMs(), config.dataDir),
      ...((r) => (r ? { repaired: r } : {}))(repaired()),
    }),
    upload: () => uploadSummary(uploader.status(), outbox.commitState(), (2 * config.platform.requestTimeoutMs) / 1000),
    platform: () => {
      const g = pipeline.state();
      const sentenceMono = g.link.lastValidSentenceMonoMs;
      // A fix now, from a receiver that still talks: the heartbeat (or driving) will send events.
      const receiverHasFix = (g.lastFix?.mode ?? 1) >= 2 && sentenceMono !== undefined && clock.monotonicMs() - sentenceMono < 60_000;
      const t = platform.tokens.tokenStatus();
      return platformLinkSummary(platform.contact.view(), {
        // Parked long, the heartbeat comes at the longer interval, and the token waits for it.
        heartbeatS: Math.max(config.recording.stoppedHeartbeatS, config.recording.parkedHeartbeatS),
        receiverHasFix,
        tokenRenewAfterMs: t.renewal === 'next-request' ? t.idleRenewAfterMs : t.renewAfterMs,
        requestTimeoutMs: config.platform.requestTimeoutMs,
      });
    },
    notes: () => headerIndexerNotes(platform.wire.snapshot().headerIndexerOff),
    ...(o.motion ? { motion: o.motion } : {}),
    network: () => {
      const w = platform.wire.snapshot();
      return {
        ...(w.protocol ? { protocol: w.protocol } : {}),
        day: w.day,
        today: w.today,
        month: w.month,
        thisMonth: w.thisMonth,
        connections: w.connections,
      };
    },
  });
}

/** The counters bench:fleet and bench:drain poll (Agent.counts()). */
export interface AgentCounts {
  recorded: number;
  pending: number;
  /** GNSS ms between the oldest queued fix and the newest recorded one (0 when nothing waits). */
  oldestPendingAgeMs: number;
  deadLettered: number;
  upload: ReturnType<Uploader['status']>['state'];
  drain: ReturnType<Uploader['status']>['drain'];
}

/** Fixes recorded and still queued, dead letters and the uploader's state: cheap getters only (a bench polls a thousand agents while they run). */
export function agentCounts(parts: { pipeline: GnssPipeline; outbox: OutboxView; uploader: Uploader }): AgentCounts {
  const u = parts.uploader.status();
  return {
    recorded: parts.pipeline.recordedCount(),
    pending: parts.outbox.pendingCount(),
    oldestPendingAgeMs: parts.outbox.oldestPendingAgeMs(),
    deadLettered: u.deadLettered,
    upload: u.state,
    drain: u.drain,
  };
}
