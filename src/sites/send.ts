import type { AgentError } from '../errors.js';
import type { OtmLocation } from './site-types.js';
import { formatProblem } from './platform-answer.js';
import type { LocationUploader, LocationUploadOutcome, RetryNotice } from './upload.js';

/**
 * Sends validated locations one request each (docs/platform-contract.md: one location per PUT) and
 * reports each answer as it comes. A location the platform refuses (400) does not stop the others;
 * a failure that would hit every one (platform unreachable, credentials, configuration) does.
 */

export interface SendReport {
  /** Stored locations as the platform returned them (or as sent, when it returned no body). */
  stored: unknown[];
  rejected: number;
  /** Set when sending stopped early; the rest were not sent. */
  failure?: AgentError;
  notSent: number;
}

export interface SendOutput {
  /** Progress and answers, for a person (stderr). */
  info(line: string): void;
  /** Told after each location the platform stored (after its `info` line). */
  stored?(location: OtmLocation): void;
  /** How to word a failure that stops the sending (default: its message). */
  failure?(error: AgentError): string;
}

export async function sendLocations(
  locations: readonly OtmLocation[],
  uploader: LocationUploader,
  output: SendOutput,
  signal?: AbortSignal,
): Promise<SendReport> {
  const report: SendReport = { stored: [], rejected: 0, notSent: 0 };
  const many = locations.length > 1;
  for (const [i, location] of locations.entries()) {
    const label = `${many ? `[${i}] ` : ''}${location.id}${location.name ? ` (${location.name})` : ''}`;
    const outcome: LocationUploadOutcome = await uploader.put(location, signal);
    if (outcome.kind === 'stored') {
      report.stored.push(outcome.body ?? location);
      output.info(`stored ${label}: HTTP ${outcome.status}${outcome.attempts > 1 ? ` after ${outcome.attempts} attempts` : ''}`);
      output.stored?.(location);
    } else if (outcome.kind === 'rejected') {
      report.rejected++;
      const lines =
        outcome.problems.length > 0 ? outcome.problems.map((p) => `  - ${formatProblem(p)}`) : ['  (the platform gave no reason)'];
      output.info(`rejected ${label}: the platform answered HTTP ${outcome.status}:\n${lines.join('\n')}`);
    } else {
      report.failure = outcome.error;
      report.notSent = locations.length - i - 1;
      output.info(`not stored ${label}: ${output.failure ? output.failure(outcome.error) : outcome.error.message}`);
      break;
    }
  }
  return report;
}

export function summaryLine(total: number, report: SendReport): string {
  const failed = report.failure ? 1 : 0;
  return `summary: ${report.stored.length} of ${total} stored, ${report.rejected} rejected by the platform, ${failed} failed, ${report.notSent} not sent`;
}

export function retryLine(n: RetryNotice): string {
  return `attempt ${n.attempt} of ${n.maxAttempts} failed (${n.cause}); retrying in ${(n.delayMs / 1000).toFixed(1)} s`;
}
