import { InvalidArgumentError } from 'commander';

/** Options several commands share; only commander is imported here, so that `--help` loads nothing else. */
export const CONFIG_OPTION = [
  '-c, --config <file>',
  'configuration file (default: $TELEMATICS_AGENT_CONFIG or /etc/telematics-agent/config.json)',
] as const;

/** A commander argument parser for a number in [min, max] (an integer when asked). */
export function numberIn(min: number, max: number, integer = false) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n)))
      throw new InvalidArgumentError(`must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}`);
    return n;
  };
}
