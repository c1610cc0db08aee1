import type { ConfigIssue } from '../errors.js';

/**
 * A value written as `<...>` is a placeholder left to fill in (`telematics-agent sim` prints a
 * complete configuration with some): named as such, so that `config check` does not accept a
 * directory literally called `<directory ...>` or report a puzzling schema message instead.
 */
const PLACEHOLDER = /^<[^<>]*>$/;

export function placeholderIssues(value: unknown, at: string[] = []): ConfigIssue[] {
  if (typeof value === 'string')
    return PLACEHOLDER.test(value)
      ? [{ path: at.join('.'), message: `still the placeholder "${value}": replace it with a real value` }]
      : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => placeholderIssues(v, [...at, String(i)]));
  if (value !== null && typeof value === 'object')
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => placeholderIssues(v, [...at, k]));
  return [];
}
