/**
 * The receiver's health for the technician: antenna state, signal strength, jamming. Fed by the
 * decoder (TXT notices, each epoch's sky at its GNSS time) and by gpsd's reports; logs one line
 * per change of state, never per sentence.
 */
import type { SatelliteInView } from '../../fix/fix.js';
import type { Logger } from '../../log.js';
import { antennaFault, antennaFromGpsd, antennaFromText, type AntennaState } from './antenna.js';
import { JammingDetector, type JammingFinding } from './jamming.js';
import { SignalStrength, type SignalSummary } from './signal.js';

/** What gpsd's TPV says of the receiver, where it says it (gpsd 3.25 and later, for some receivers). */
export interface GpsdReceiverReport {
  ant?: number;
  antPwr?: number;
  jam?: number;
}

export interface ReceiverHealthState {
  antenna: AntennaState;
  /** Who said so: the receiver's TXT notice, or gpsd. Absent while unknown. */
  antennaFrom?: 'nmea' | 'gpsd';
  /** gpsd's antPwr: the receiver feeds the antenna or not. */
  antennaPower?: 'on' | 'off';
  signal: SignalSummary;
  jamming: JammingFinding & { indicator?: number };
}

export class ReceiverHealth {
  readonly #logger: Logger | undefined;
  readonly #signal = new SignalStrength();
  readonly #jamming = new JammingDetector();
  #antenna: AntennaState = 'unknown';
  #antennaFrom: 'nmea' | 'gpsd' | undefined;
  #antennaPower: 'on' | 'off' | undefined;
  #indicator: number | undefined;
  #jammed = false;

  constructor(logger?: Logger) {
    this.#logger = logger;
  }

  /** The text of a TXT sentence (anything not about the antenna is ignored). */
  text(text: string): void {
    const state = antennaFromText(text);
    if (state !== undefined) this.#setAntenna(state, 'nmea');
  }

  gpsd(report: GpsdReceiverReport): void {
    if (report.antPwr === 1 || report.antPwr === 2) this.#antennaPower = report.antPwr === 2 ? 'on' : 'off';
    // gpsd writes `ant` only for a fault (above ANT_OK) and keeps it until the receiver reports
    // again: a report without it after a fault from gpsd means the fault is gone.
    if (report.ant !== undefined) this.#setAntenna(antennaFromGpsd(report.ant), 'gpsd');
    else if (this.#antennaFrom === 'gpsd' && antennaFault(this.#antenna)) this.#setAntenna('OK', 'gpsd');
    if (report.jam !== undefined) {
      this.#indicator = report.jam;
      this.#jamming.indicator(report.jam);
      this.#checkJamming();
    }
  }

  /** One epoch's satellites in view, at the epoch's GNSS time (ms). */
  epoch(timeMs: number, satellites: readonly SatelliteInView[]): void {
    this.#signal.add(timeMs, satellites);
    this.#jamming.add(timeMs, satellites);
    this.#checkJamming();
  }

  state(): ReceiverHealthState {
    const jamming: ReceiverHealthState['jamming'] = { ...this.#jamming.finding() };
    if (this.#indicator !== undefined) jamming.indicator = this.#indicator;
    const s: ReceiverHealthState = { antenna: this.#antenna, signal: this.#signal.summary(), jamming };
    if (this.#antennaFrom !== undefined) s.antennaFrom = this.#antennaFrom;
    if (this.#antennaPower !== undefined) s.antennaPower = this.#antennaPower;
    return s;
  }

  #setAntenna(state: AntennaState, from: 'nmea' | 'gpsd'): void {
    const was = this.#antenna;
    this.#antenna = state;
    this.#antennaFrom = from;
    if (state === was) return;
    const details = { antenna: state, was, from };
    if (antennaFault(state)) this.#logger?.warn(details, `GNSS antenna ${state.toLowerCase()}: ${antennaAdvice(state)}`);
    else this.#logger?.info(details, `GNSS antenna ${state === 'OK' ? 'OK' : state.toLowerCase()}`);
  }

  #checkJamming(): void {
    const finding = this.#jamming.finding();
    const jammed = finding.state === 'suspected';
    if (jammed === this.#jammed) return;
    this.#jammed = jammed;
    if (jammed) this.#logger?.warn({ jamming: finding.state, reason: finding.reason }, `GNSS jamming suspected: ${finding.reason ?? ''}`);
    else this.#logger?.info({ jamming: finding.state }, 'GNSS jamming no longer suspected: C/N0 is back');
  }
}

/** What the technician does about each antenna fault (status, doctor and the log say the same). */
export function antennaAdvice(state: AntennaState): string {
  if (state === 'OPEN') return 'no antenna current: check the antenna cable and its connector at the receiver';
  if (state === 'SHORT') return 'the antenna or its cable is shorted: replace the antenna (and the cable if it is pinched)';
  return '';
}

export const JAMMING_ADVICE = 'look for a device in the cab (a cigarette-lighter GPS jammer), then for a new transmitter near the antenna';
