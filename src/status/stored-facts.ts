import type { Database } from '../store/database.js';
import type { MetaStore } from '../store/meta.js';
import type { StoredFacts } from './daemon-provider.js';
import { UPLOAD_FACT_KEYS, type UploadError } from './upload-facts.js';

/**
 * Read once when the daemon starts: the last delivery, the last upload error and the stored token
 * pair's age from before this start, which `status` shows until this run has its own (issue 13.14).
 */
export function readStoredFacts(db: Database, meta: MetaStore): StoredFacts {
  const facts: StoredFacts = {};
  try {
    const lastSuccess = Number(meta.get(UPLOAD_FACT_KEYS.lastSuccessAt));
    if (Number.isFinite(lastSuccess) && lastSuccess > 0) facts.lastSuccessAt = lastSuccess;
    const lastError = meta.getJson<UploadError>(UPLOAD_FACT_KEYS.lastError);
    if (lastError?.code) facts.lastError = lastError;
    const token = db.prepare('SELECT obtained_at AS obtainedAt, expires_in_s AS expiresInS FROM token_pair WHERE id = 1').get() as
      | StoredFacts['token']
      | undefined;
    if (token) facts.token = token;
  } catch {
    // A fact status can live without; a damaged file is the salvage's business.
  }
  return facts;
}
