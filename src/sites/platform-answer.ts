/**
 * Reading the platform's answer to a location PUT. The platform documents no response or error
 * bodies; the generic OTM5 API (docs/platform-contract.md) answers 400 with an array of
 * `{type, message, field}` (type invalidJson / invalidField / missingField) and 500 with a string.
 * Anything else is shown as it came, shortened.
 */

export interface PlatformProblem {
  field?: string;
  type?: string;
  message: string;
}

const MAX_TEXT = 500;

export function problemsFromBody(body: unknown, text: string): PlatformProblem[] {
  const list = Array.isArray(body) ? body : isObject(body) && Array.isArray(body.errors) ? body.errors : undefined;
  if (list) {
    const problems = list.map(toProblem).filter((p): p is PlatformProblem => p !== undefined);
    if (problems.length > 0) return problems;
  }
  if (isObject(body)) {
    const p = toProblem(body);
    if (p) return [p];
  }
  if (typeof body === 'string' && body.trim() !== '') return [{ message: shorten(body) }];
  const t = text.trim();
  return t === '' ? [] : [{ message: shorten(t) }];
}

function toProblem(entry: unknown): PlatformProblem | undefined {
  if (typeof entry === 'string') return { message: entry };
  if (!isObject(entry)) return undefined;
  const message = firstString(entry, ['message', 'error_description', 'detail', 'title', 'error']);
  if (message === undefined) return { message: shorten(JSON.stringify(entry)) };
  const field = firstString(entry, ['field', 'path', 'pointer']);
  const type = firstString(entry, ['type', 'code']);
  return { message, ...(field !== undefined ? { field } : {}), ...(type !== undefined ? { type } : {}) };
}

/** `  - geoReference.lat (invalidField): must be a number` */
export function formatProblem(p: PlatformProblem): string {
  const where = p.field ? `${p.field}${p.type ? ` (${p.type})` : ''}: ` : p.type ? `${p.type}: ` : '';
  return `${where}${p.message}`;
}

function firstString(o: Record<string, unknown>, keys: string[]): string | undefined {
  for (const k of keys) {
    const v = o[k];
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
}

function shorten(s: string): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > MAX_TEXT ? `${one.slice(0, MAX_TEXT)}...` : one;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
