import { describe, expect, it } from 'vitest';
import { isAgentError } from '../../src/errors.js';
import { assertNativeModules, nativeMismatchMessage } from '../../src/system/native-modules.js';

// Node's own words for a binding of another ABI, and glibc's for one of another architecture.
const ABI_ERROR =
  "The module '/opt/telematics-agent/node_modules/better-sqlite3/build/Release/better_sqlite3.node'\n" +
  'was compiled against a different Node.js version using\nNODE_MODULE_VERSION 115. This version of Node.js requires\n' +
  'NODE_MODULE_VERSION 127. Please try re-compiling or re-installing\nthe module (for instance, using `npm rebuild` or `npm install`).';
const ELF_ERROR = '/opt/telematics-agent/node_modules/better-sqlite3/build/Release/better_sqlite3.node: wrong ELF class: ELFCLASS32';

describe('the native module check before the daemon opens its database', () => {
  it('passes with the binding this node loads', () => {
    expect(() => assertNativeModules()).not.toThrow();
  });

  it('turns an ABI mismatch into one sentence naming both ABIs and the fix, a configuration error', () => {
    let caught: unknown;
    try {
      assertNativeModules(() => {
        throw new Error(ABI_ERROR);
      });
    } catch (e) {
      caught = e;
    }
    expect(isAgentError(caught) && caught.code).toBe('NATIVE_MODULE_MISMATCH');
    expect(isAgentError(caught) && caught.errorClass).toBe('config');
    const msg = nativeMismatchMessage(new Error(ABI_ERROR));
    expect(msg).toContain('built for Node ABI 115');
    expect(msg).toContain(`ABI ${process.versions.modules}`);
    expect(msg).toContain('npm rebuild better-sqlite3');
    expect(msg).not.toContain('\n');
  });

  it('names the architecture when the binding is of another one', () => {
    const msg = nativeMismatchMessage(new Error(ELF_ERROR));
    expect(msg).toContain(`another architecture than this ${process.arch}`);
    expect(msg).toContain('dpkg --print-architecture');
  });
});
