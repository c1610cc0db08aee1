import type { z } from 'zod';
import type { ConfigIssue } from '../errors.js';
import { defaultAt, ignoredKeys, knownKeys as allKeys, retiredKeys } from './schema-keys.js';

/**
 * Turns the schema's issues into ones that name the key and say how to fix it, with an example
 * where the schema's own text would only say "Invalid input: expected number, received string".
 * `json` is the parsed file: the value a person wrote is quoted back (never under credentials,
 * where it could be a password).
 */
export function toIssues(issues: readonly z.core.$ZodIssue[], json: unknown): ConfigIssue[] {
  // A misspelt section that is absent under its right name ("gps" for "gnss"): its own issues
  // ("set exactly one GNSS source") come from the defaults of the missing section and would send
  // the reader after the wrong fix; the "did you mean" of the unknown key is the one to show.
  const misspelt = new Set<string>();
  for (const issue of issues) {
    if (issue.code !== 'unrecognized_keys') continue;
    const parent = issue.path.map(String);
    for (const key of issue.keys) {
      const near = closestKey(key, knownKeys(parent), parent);
      if (near !== undefined && valueAt(json, [...parent, near]) === undefined) misspelt.add([...parent, near].join('.'));
    }
  }
  return issues
    .filter((issue) => {
      const p = issue.path.map(String).join('.');
      return issue.code === 'unrecognized_keys' || ![...misspelt].some((m) => p === m || p.startsWith(`${m}.`));
    })
    .map((issue) => toIssue(issue, json));
}

/** The keys to offer at a path: an earlier version's keys are accepted, never suggested. */
function knownKeys(keyPath: string[]): string[] {
  const retired = retiredKeys();
  return allKeys(keyPath).filter((k) => !retired.includes([...keyPath, k].join('.')));
}

function toIssue(issue: z.core.$ZodIssue, json: unknown): ConfigIssue {
  const keys = issue.path.map(String);
  const keyPath = keys.join('.');
  // A key the agent no longer reads, with a value an earlier version would have refused too:
  // the fix is to remove it, not to correct a value nothing reads.
  if (issue.code !== 'unrecognized_keys' && ignoredKeys().includes(keyPath))
    return { path: keyPath, message: 'is no longer read (a key of an earlier version, still accepted as a number): remove the key' };
  const value = valueAt(json, keys);
  // zod's own wording starts like this; messages the schema words itself are kept as they are.
  const raw = /^(Invalid input|Invalid option|Too small|Too big|Invalid string)/.test(issue.message);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const where = keyPath ? `${keyPath}.` : '';
      const known = knownKeys(keys);
      const hints = issue.keys.map((k) => {
        const near = closestKey(k, known, keys);
        return near ? `${k}: did you mean ${near}?` : k;
      });
      return {
        path: issue.keys.map((k) => `${where}${k}`).join(', '),
        message: `unknown key${issue.keys.length > 1 ? 's' : ''} (${hints.join('; ')}); allowed here: ${known.join(', ')}`,
      };
    }
    case 'invalid_type':
      if (value === undefined)
        return { path: keyPath, message: raw ? `is required (${expectedText(issue.expected, keys)})` : issue.message };
      if (!raw) return { path: keyPath, message: issue.message };
      return {
        path: keyPath,
        message: `must be ${expectedText(issue.expected, keys)}, not ${valueText(value, keys)}${exampleText(keys, example(issue.expected, value, keys))}`,
      };
    case 'invalid_value': {
      if (!raw) return { path: keyPath, message: issue.message };
      const allowed = issue.values.map((v) => JSON.stringify(v));
      const near = typeof value === 'string' ? closestValue(value, issue.values) : undefined;
      const got = `got ${valueText(value, keys)}${near !== undefined ? `; did you mean ${JSON.stringify(near)}?` : ''}`;
      const shown = near ?? defaultAt(keys) ?? issue.values[0];
      return { path: keyPath, message: `must be one of ${allowed.join(', ')} (${got})${exampleText(keys, shown)}` };
    }
    case 'too_small':
    case 'too_big': {
      if (!raw) return { path: keyPath, message: issue.message };
      const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
      if (issue.origin === 'string' && issue.code === 'too_small' && Number(bound) <= 1)
        return { path: keyPath, message: 'must not be empty' };
      const word = issue.code === 'too_small' ? (issue.inclusive ? 'at least' : 'more than') : issue.inclusive ? 'at most' : 'less than';
      const what = issue.origin === 'string' ? ` characters long` : issue.origin === 'array' ? ' items' : '';
      return {
        path: keyPath,
        message: `must be ${word} ${String(bound)}${what}, not ${valueText(value, keys)}${exampleText(keys, defaultAt(keys))}`,
      };
    }
    default:
      return { path: keyPath, message: issue.message };
  }
}

function secret(keys: string[]): boolean {
  return keys[0] === 'credentials' && keys[1] !== 'username';
}

function expectedText(expected: string, keys: string[]): string {
  switch (expected) {
    case 'number':
      return 'a number';
    case 'int':
      return 'a whole number';
    case 'boolean':
      return 'true or false (without quotes)';
    case 'string':
      return 'a string in double quotes';
    case 'object': {
      const inner = knownKeys(keys);
      return inner.length > 0 ? `an object with the keys ${inner.join(', ')}` : 'an object ({ ... })';
    }
    case 'array':
      return 'a list ([ ... ])';
    default:
      return expected;
  }
}

function valueText(value: unknown, keys: string[]): string {
  if (secret(keys)) return `a ${value === null ? 'null' : Array.isArray(value) ? 'list' : typeof value} (not shown)`;
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)}`;
  if (typeof value === 'number') return `the number ${value}`;
  if (typeof value === 'boolean' || value === null) return String(value);
  if (Array.isArray(value)) return 'a list';
  return 'an object';
}

/** The value a person most likely meant: their own, in the right type, else the default. */
function example(expected: string, value: unknown, keys: string[]): unknown {
  const fallback = defaultAt(keys);
  if (secret(keys)) return undefined;
  if ((expected === 'number' || expected === 'int') && typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) {
    const n = Number(value);
    return expected === 'int' && !Number.isInteger(n) ? (fallback ?? Math.round(n)) : n;
  }
  if (expected === 'int' && typeof value === 'number') return fallback ?? Math.round(value);
  if (expected === 'boolean' && typeof value === 'string') {
    if (/^(true|yes|on|1)$/i.test(value.trim())) return true;
    if (/^(false|no|off|0)$/i.test(value.trim())) return false;
  }
  if (expected === 'string' && (typeof value === 'number' || typeof value === 'boolean')) return String(value);
  if (fallback !== undefined) return fallback;
  return { number: 10, int: 10, boolean: true, string: 'text' }[expected];
}

function exampleText(keys: string[], value: unknown): string {
  const key = keys.at(-1);
  if (value === undefined || key === undefined || typeof value === 'object') return '';
  return `, e.g. "${key}": ${JSON.stringify(value)}`;
}

export function valueAt(json: unknown, keys: readonly string[]): unknown {
  let node = json;
  for (const k of keys) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, k)) return undefined;
    node = (node as Record<string, unknown>)[k];
  }
  return node;
}

/**
 * Names people reach for that are too far from the schema's for an edit distance: the section is
 * "gnss" (GPS is one of its systems), the receiver's port is "path".
 */
const SYNONYMS: Record<string, Record<string, string>> = {
  '': { gps: 'gnss', nmea: 'gnss', receiver: 'gnss', auth: 'credentials', logging: 'log' },
  gnss: { port: 'path', device: 'path', serial: 'path', baud: 'baudRate', file: 'replayFile', replay: 'replayFile' },
  credentials: { user: 'username', pass: 'password' },
};

function closestKey(key: string, known: string[], parent: string[] = []): string | undefined {
  const synonym = SYNONYMS[parent.join('.')]?.[key.toLowerCase()];
  if (synonym !== undefined && known.includes(synonym)) return synonym;
  let best: { k: string; d: number } | undefined;
  for (const k of known) {
    const d = k.toLowerCase() === key.toLowerCase() ? 0 : editDistance(k.toLowerCase(), key.toLowerCase());
    if (d <= Math.max(1, Math.floor(k.length / 4)) && (!best || d < best.d)) best = { k, d };
  }
  return best?.k;
}

function closestValue(value: string, allowed: readonly unknown[]): unknown {
  const v = value.trim().toLowerCase();
  const strings = allowed.filter((a): a is string => typeof a === 'string');
  return (
    strings.find((a) => a.toLowerCase() === v) ??
    strings.find((a) => v.length >= 3 && a.toLowerCase().startsWith(v)) ??
    closestKey(value, strings) ??
    // "stage" for "staging": a shared start of four letters or more, when only one value has it.
    only(strings.filter((a) => v.length >= 4 && a.toLowerCase().startsWith(v.slice(0, 4))))
  );
}

function only<T>(list: T[]): T | undefined {
  return list.length === 1 ? list[0] : undefined;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length] ?? 0;
}
