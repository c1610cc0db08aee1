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

export function renderResults(results: readonly CheckResult[], color: boolean): string {
  const paint = (v: string): string => {
    if (!color) return v;
    const code = v.startsWith('PASS') ? '32' : v.startsWith('WARN') ? '33' : v.startsWith('FAIL') ? '31' : '2';
    return `\u001b[${code}m${v}\u001b[0m`;
  };
  const lines = results.map(
    (r) => `${paint(r.verdict.padEnd(4))}  ${r.name.padEnd(20)} ${r.detail}${r.fix ? `\n${' '.repeat(27)}fix: ${r.fix}` : ''}`,
  );
  const failed = results.filter((r) => r.verdict === 'FAIL').length;
  const warned = results.filter((r) => r.verdict === 'WARN').length;
  return `${lines.join('\n')}\n${failed === 0 ? (warned === 0 ? 'all checks passed' : `${warned} warning(s), nothing failed`) : `${failed} check(s) failed`}\n`;
}
