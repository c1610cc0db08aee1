import { InvalidArgumentError } from 'commander';
import { isDotSegment, URL_PATH_ID_PROBLEM } from '../config/url-path-id.js';

/** Options several commands share; only commander is imported here, so that `--help` loads nothing else. */
export const CONFIG_OPTION = [
  '-c, --config <file>',
  'configuration file (default: $TELEMATICS_AGENT_CONFIG or /etc/telematics-agent/config.json)',
] as const;

/**
 * The commander argument parser for every numeric option: a number in [min, max], an integer when
 * asked; `above` makes the lower bound exclusive (a duration or a distance above 0).
 */
export function numberIn(min: number, max: number, integer = false, above = false) {
  const kind = integer ? 'a whole number' : 'a number';
  const range = max === Infinity ? `${above ? 'above' : 'of at least'} ${min}` : `from ${min} to ${max}`;
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < min || (above && n === min) || n > max || (integer && !Number.isInteger(n)))
      throw new InvalidArgumentError(`must be ${kind} ${range}`);
    return n;
  };
}

/** The commander argument parser for an id that goes into a platform URL path (the config's check). */
export function urlPathIdArg(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty');
  if (isDotSegment(value)) throw new InvalidArgumentError(URL_PATH_ID_PROBLEM);
  return value;
}
