/**
 * Validates payloads against the official OTM5 OpenAPI document (the shared test data beside the repository, sharedDir()),
 * read at run time from the folder beside the repository (never copied into it).
 *
 * OpenAPI 3.0 schemas are not quite JSON Schema, so the document is adapted once:
 * - `nullable: true` becomes a `null` member of `type` (and of `enum` when there is one);
 * - `discriminator` and `example` are OpenAPI annotations: dropped (each `oneOf` branch of the OTM5
 *   document pins its discriminator property with an `enum`, so `oneOf` alone still selects one);
 * - OpenAPI's numeric/string formats (int32, int64, float, double, byte, binary, password) are known
 *   to Ajv as range checks or annotations; date-time etc. come from ajv-formats.
 * - `unrestricted_json` (externalAttributes values) accepts any JSON value, as its description and
 *   the document's own examples say (its literal `type: object` rejects those examples).
 * `$ref: '#/components/schemas/X'` resolves inside the adapted document, registered under one id.
 *
 * Usage (skip when the shared folder is absent, e.g. in a clone without it):
 *   const otm = await loadOtmSchemas();
 *   it.skipIf(!otm)(...);  otm!.validate('locationUpdateEvent', event) -> [] or error lines
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The shared test data folder beside the repository, or undefined (with a one-line notice) when it is not there. */
export function sharedDir(): string | undefined {
  const dir = path.resolve(REPO_ROOT, '..', 'shared');
  return existsSync(dir) ? dir : undefined;
}

export const OTM_SCHEMA_FILE = 'otm5/otm-api-v5.6.yaml';

export interface OtmSchemas {
  /** Error lines (`/path: message`), empty when `value` is valid against components/schemas/<name>. */
  validate(name: string, value: unknown): string[];
  /** The adapted JSON schema of components/schemas/<name> (for enums in test data). */
  schema(name: string): Record<string, unknown>;
}

let cached: Promise<OtmSchemas | undefined> | undefined;

/** Loads and adapts the OTM5 document once per test process (parsing it takes about a second). */
export function loadOtmSchemas(): Promise<OtmSchemas | undefined> {
  cached ??= Promise.resolve().then(() => {
    const shared = sharedDir();
    const file = shared ? path.join(shared, OTM_SCHEMA_FILE) : undefined;
    if (!file || !existsSync(file)) {
      process.stderr.write(
        `otm-schema: ${file ?? path.resolve(REPO_ROOT, '..', 'shared', OTM_SCHEMA_FILE)} not found; OTM5 schema tests are skipped\n`,
      );
      return undefined;
    }
    return build(parse(readFileSync(file, 'utf8')) as { components: { schemas: Record<string, unknown> } });
  });
  return cached;
}

const DOC_ID = 'otm5.json';

function build(doc: { components: { schemas: Record<string, unknown> } }): OtmSchemas {
  const adapted = { $id: DOC_ID, components: { schemas: adapt(doc.components.schemas) as Record<string, Record<string, unknown>> } };
  // `unrestricted_json` ("Space for any (nested) properties", the value type of every
  // externalAttributes map) is written as `type: object`, yet the document's own examples give
  // plain strings (components/schemas/document: externalAttributes {"externalID": "photo1234"}),
  // which the literal schema rejects. Read it as the description says: any JSON value.
  if (adapted.components.schemas.unrestricted_json)
    adapted.components.schemas.unrestricted_json = { description: 'any JSON value (see above)' };
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
  const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  ajv.addFormat('float', { type: 'number', validate: (n: number) => Number.isFinite(n) });
  ajv.addFormat('double', { type: 'number', validate: (n: number) => Number.isFinite(n) });
  for (const f of ['byte', 'binary', 'password', 'recurrence']) ajv.addFormat(f, true);
  ajv.addSchema(adapted);
  const compiled = new Map<string, ValidateFunction>();
  return {
    validate(name, value) {
      let fn = compiled.get(name);
      if (!fn) {
        if (!adapted.components.schemas[name]) throw new Error(`no schema components/schemas/${name} in ${OTM_SCHEMA_FILE}`);
        fn = ajv.compile({ $ref: `${DOC_ID}#/components/schemas/${name}` });
        compiled.set(name, fn);
      }
      if (fn(value)) return [];
      return (fn.errors ?? []).map(
        (e) => `${e.instancePath || '/'}: ${e.message ?? 'invalid'}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`,
      );
    },
    schema(name) {
      const s = adapted.components.schemas[name];
      if (!s) throw new Error(`no schema components/schemas/${name} in ${OTM_SCHEMA_FILE}`);
      return s;
    },
  };
}

/** OpenAPI 3.0 schema object -> JSON Schema (draft-07 as Ajv reads it). */
function adapt(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(adapt);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    if (k === 'example' || k === 'discriminator' || k === 'xml' || k === 'externalDocs') continue;
    if (k === 'nullable') continue;
    // `properties` maps names to schemas: adapt the schemas, never treat a property name as a keyword.
    if (k === 'properties' && v && typeof v === 'object') {
      out[k] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([p, s]) => [p, adapt(s)]));
      continue;
    }
    out[k] = adapt(v);
  }
  if ((node as Record<string, unknown>).nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  }
  return out;
}
