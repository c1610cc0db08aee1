import type { Stores } from '../store/stores.js';
import type { StoredFacts } from './daemon-provider.js';
import { UPLOAD_FACT_KEYS, type UploadError } from './upload-facts.js';

/**
 * Read once when the daemon starts: the last delivery, the last upload error and the stored token
 * pair's age from before this start, which `status` shows until this run has its own.
 */
export function readStoredFacts({ meta, tokens }: Pick<Stores, 'meta' | 'tokens'>): StoredFacts {
  const facts: StoredFacts = {};
  try {
    const lastSuccess = Number(meta.get(UPLOAD_FACT_KEYS.lastSuccessAt));
    if (Number.isFinite(lastSuccess) && lastSuccess > 0) facts.lastSuccessAt = lastSuccess;
    const lastError = meta.getJson<UploadError>(UPLOAD_FACT_KEYS.lastError);
    if (lastError?.code) facts.lastError = lastError;
    const token = tokens.age();
    if (token) facts.token = token;
  } catch {
    // A fact status can live without; a damaged file is the salvage's business.
  }
  return facts;
}
