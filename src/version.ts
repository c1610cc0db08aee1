import { readFileSync } from 'node:fs';

/** The package version, read once from package.json (dist/ sits beside it). */
export const VERSION: string = (() => {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
})();

/** The release date of this build; dates far before it are GNSS week-rollover suspects. */
export const RELEASE_DATE_MS = Date.UTC(2026, 10, 1);
