// Makes the CLI entry executable after tsc.
import { chmodSync } from 'node:fs';
chmodSync(new URL('../dist/cli/main.js', import.meta.url), 0o755);
