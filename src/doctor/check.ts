import { printable } from '../terminal/printable.js';
import { wrapToWidth } from '../terminal/screen-fit.js';

/** One doctor finding: PASS / WARN / FAIL with a one-line fix a technician can act on. */
export type Verdict = 'PASS' | 'WARN' | 'FAIL' | 'SKIP';

export interface CheckResult {
  name: string;
  verdict: Verdict;
  /** What was found, one line. */
  detail: string;
  /** What to do about it (absent on PASS). */
  fix?: string;
}

export const pass = (name: string, detail: string): CheckResult => ({ name, verdict: 'PASS', detail });
export const warn = (name: string, detail: string, fix: string): CheckResult => ({ name, verdict: 'WARN', detail, fix });
export const fail = (name: string, detail: string, fix: string): CheckResult => ({ name, verdict: 'FAIL', detail, fix });
export const skip = (name: string, detail: string): CheckResult => ({ name, verdict: 'SKIP', detail });

/** Exit 0 when nothing failed (PASS/WARN/SKIP only), 1 otherwise. */
export function doctorExitCode(results: readonly CheckResult[]): 0 | 1 {
  return results.some((r) => r.verdict === 'FAIL') ? 1 : 0;
}

/**
 * The checks as text. Details and fixes are never cut: with `width` (a terminal) long
 * lines wrap under the detail, without it (a pipe) they go out whole. Text from elsewhere (platform
 * answers, error messages) is shown with its control characters made visible.
 */
export function renderResults(results: readonly CheckResult[], color: boolean, width?: number): string {
  const paint = (v: string): string => {
    if (!color) return v;
    const code = v.startsWith('PASS') ? '32' : v.startsWith('WARN') ? '33' : v.startsWith('FAIL') ? '31' : '2';
    return `\u001b[${code}m${v}\u001b[0m`;
  };
  const lines = results.map(
    (r) =>
      `${paint(r.verdict.padEnd(4))}  ${r.name.padEnd(20)} ${printable(r.detail)}${r.fix ? `\n${' '.repeat(27)}fix: ${printable(r.fix)}` : ''}`,
  );
  const failed = results.filter((r) => r.verdict === 'FAIL').length;
  const warned = results.filter((r) => r.verdict === 'WARN').length;
  const text = `${lines.join('\n')}\n${failed === 0 ? (warned === 0 ? 'all checks passed' : `${warned} warning(s), nothing failed`) : `${failed} check(s) failed`}\n`;
  return width === undefined ? text : wrapToWidth(text, width, 27);
}

/** `doctor --json`: every check whole, and the counts. */
export function resultsJson(results: readonly CheckResult[]): string {
  const failed = results.filter((r) => r.verdict === 'FAIL').length;
  const warnings = results.filter((r) => r.verdict === 'WARN').length;
  return `${JSON.stringify({ checks: results, failed, warnings, exitCode: doctorExitCode(results) })}\n`;
}
