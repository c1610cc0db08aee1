/**
 * What `status` shows of the uploader when the daemon is down. The last success is the outbox's
 * last delivery, written with its counters (once a minute while delivering, and at stop), so it
 * survives a power cut at most a minute old. The last error lives only in the uploader's memory;
 * the daemon writes it when it stops (no write per failure: a 5xx storm should not cost the card a
 * transaction each), so after a crash it is that of the last clean stop.
 */
import type { MetaStore } from '../store/meta.js';
import { DELIVERY_META } from '../store/outbox/counters.js';

export const UPLOAD_FACT_KEYS = { lastSuccessAt: DELIVERY_META.lastSuccessAt, lastError: 'upload.lastError' } as const;

export interface UploadError {
  code: string;
  class: string;
  message: string;
  at: number;
}

/** Keeps the stored error when this run had none of its own. */
export function saveLastUploadError(meta: Pick<MetaStore, 'setJson'>, e: UploadError | undefined): void {
  if (e) meta.setJson(UPLOAD_FACT_KEYS.lastError, { code: e.code, class: e.class, message: e.message, at: e.at });
}
