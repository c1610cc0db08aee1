/**
 * The uploader's last success and last error live in the daemon's memory; `status` needs them when
 * the daemon is down too. The daemon writes them to the meta table when it stops (no write per
 * upload: an idle or draining daemon should not pay a transaction for a status line), and the
 * database snapshot reads them back. The last success is also written with the outbox's counters
 * once a minute, so after a power cut it is at most a minute old; the last error is that of the
 * last clean stop.
 */
import type { MetaStore } from '../store/meta.js';
import { DELIVERY_META } from '../store/outbox-counters.js';

export const UPLOAD_FACT_KEYS = { lastSuccessAt: DELIVERY_META.lastSuccessAt, lastError: 'upload.lastError' } as const;

export interface UploadFacts {
  lastSuccessAt?: number;
  lastError?: { code: string; class: string; message: string; at: number };
}

/** Keeps the stored fact when this run has none of its own (no upload since start). */
export function saveUploadFacts(meta: Pick<MetaStore, 'set' | 'setJson'>, facts: UploadFacts): void {
  if (facts.lastSuccessAt !== undefined) meta.set(UPLOAD_FACT_KEYS.lastSuccessAt, String(facts.lastSuccessAt));
  const e = facts.lastError;
  if (e) meta.setJson(UPLOAD_FACT_KEYS.lastError, { code: e.code, class: e.class, message: e.message, at: e.at });
}
