import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import type { Agent as AgentType } from 'undici';
// The Agent class alone: undici's index loads fetch, WebSocket, caches and mocks as well, about
// 8 MB of the daemon's resident memory it never uses (issue 5 RSS target; measured). A test
// checks that this is the class `undici` exports, so an upgrade that moves it fails loudly.
import Agent from 'undici/lib/dispatcher/agent.js';
import { AgentError } from '../errors.js';

export interface PlatformDispatcherOptions {
  /** platform.caFile: an extra CA (PEM) trusted besides the system's roots. */
  caFile?: string;
  /** platform.maxConnections: connections per origin. */
  maxConnections: number;
  /** platform.requestTimeoutMs: also bounds connecting, headers and the gap between body chunks. */
  requestTimeoutMs: number;
}

/**
 * The one undici dispatcher of the process: keep-alive connections, bounded per origin, TLS
 * verification always on. The per-request total deadline lives in PlatformHttp (undici's own
 * body timeout restarts with every chunk and cannot bound a slow-drip answer).
 */
export function createPlatformDispatcher(options: PlatformDispatcherOptions): AgentType {
  let ca: string[] | undefined;
  if (options.caFile !== undefined) {
    let pem: string;
    try {
      pem = readFileSync(options.caFile, 'utf8');
    } catch (e) {
      throw new AgentError(
        'PLATFORM_CA_UNREADABLE',
        `platform.caFile: cannot read ${options.caFile} (${(e as NodeJS.ErrnoException).code ?? String(e)}); fix the path or remove the key`,
        { class: 'config', cause: e },
      );
    }
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
      throw new AgentError(
        'PLATFORM_CA_INVALID',
        `platform.caFile: ${options.caFile} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
        { class: 'config' },
      );
    }
    // `ca` replaces Node's bundled roots; keep them so that the public endpoints still verify.
    ca = [...rootCertificates, pem];
  }
  return new Agent({
    connections: options.maxConnections,
    // Shorter than the 5 s idle timeout common in load balancers, so that we never write a request
    // onto a connection the server is closing.
    keepAliveTimeout: 4000,
    keepAliveMaxTimeout: 30_000,
    headersTimeout: options.requestTimeoutMs,
    bodyTimeout: options.requestTimeoutMs,
    connect: { timeout: Math.min(10_000, options.requestTimeoutMs), rejectUnauthorized: true, ...(ca ? { ca } : {}) },
  });
}
