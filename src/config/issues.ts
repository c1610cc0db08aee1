import type { z } from 'zod';
import type { ConfigIssue } from '../errors.js';
import { knownKeys } from './schema-keys.js';

/** Turns a schema issue into one that names the key and says how to fix it. */
export function toIssue(issue: z.core.$ZodIssue): ConfigIssue {
  const keyPath = issue.path.map(String).join('.');
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    const where = keyPath ? `${keyPath}.` : '';
    const known = knownKeys(issue.path.map(String));
    const hints = issue.keys.map((k) => {
      const near = closestKey(k, known);
      return near ? `${k}: did you mean ${near}?` : k;
    });
    return {
      path: issue.keys.map((k) => `${where}${k}`).join(', '),
      message: `unknown key${issue.keys.length > 1 ? 's' : ''} (${hints.join('; ')}); allowed here: ${known.join(', ')}`,
    };
  }
  if (issue.code === 'invalid_type' && /received undefined/.test(message)) message = `is required (${issue.expected})`;
  return { path: keyPath, message };
}

function closestKey(key: string, known: string[]): string | undefined {
  let best: { k: string; d: number } | undefined;
  for (const k of known) {
    const d = k.toLowerCase() === key.toLowerCase() ? 0 : editDistance(k.toLowerCase(), key.toLowerCase());
    if (d <= Math.max(1, Math.floor(k.length / 4)) && (!best || d < best.d)) best = { k, d };
  }
  return best?.k;
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
