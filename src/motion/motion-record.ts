import type { MovementSnapshot } from './movement.js';
import type { OdometerEdge } from './odometer.js';

/** The meta key of the motion state (MotionRecord, JSON). */
export const MOTION_META_KEY = 'motion.state';
/** The meta key `odometer set` writes ({metres, setAt}); the daemon applies it at its next start. */
export const ODOMETER_SETTING_KEY = 'motion.odometerSetting';
/** The meta key `engine-hours set` writes ({seconds, setAt}); applied the same way. */
export const ENGINE_HOURS_SETTING_KEY = 'motion.engineHoursSetting';

/** What the meta table gives the tracker (store/meta.ts MetaStore). */
export interface MotionMeta {
  getJson<T>(key: string): T | undefined;
  setJson(key: string, value: unknown): void;
}

/** The motion state as stored: the movement, the odometer (metres) and the last ignition state. */
export interface MotionRecord {
  movement: MovementSnapshot;
  odometerM: number;
  /** The epoch the odometer last counted (at odometerM): a restart bridges from it. */
  odometerEdge?: OdometerEdge;
  ignition?: 'on' | 'off';
  /** setAt of the installer's odometer setting already applied (so a restart does not apply it again). */
  appliedSettingAt?: number;
  /** Ignition-on time, seconds (fractional). */
  engineS?: number;
  /** setAt of the engine hours setting already applied. */
  appliedEngineSettingAt?: number;
  /** The engine stop of the ignition state, GNSS ms (a gap after it is a stop). */
  engineOffSince?: number;
}

export interface OdometerSetting {
  metres: number;
  /** Wall ms when it was set (identifies the setting; display only). */
  setAt: number;
}

export interface EngineHoursSetting {
  seconds: number;
  /** Wall ms when it was set (identifies the setting; display only). */
  setAt: number;
}

/** The installer's setting, when there is one the running state has not applied yet. */
export function applyOdometerSetting(meta: MotionMeta, appliedAt: number | undefined): OdometerSetting | undefined {
  const s = meta.getJson<OdometerSetting>(ODOMETER_SETTING_KEY);
  if (!s || !Number.isFinite(s.metres) || s.setAt === appliedAt) return undefined;
  return s;
}

/** The engine hours setting, when there is one the running state has not applied yet. */
export function applyEngineHoursSetting(meta: MotionMeta, appliedAt: number | undefined): EngineHoursSetting | undefined {
  const s = meta.getJson<EngineHoursSetting>(ENGINE_HOURS_SETTING_KEY);
  if (!s || !Number.isFinite(s.seconds) || s.seconds < 0 || s.setAt === appliedAt) return undefined;
  return s;
}
