/**
 * An HTTP/2 front for tests, as a TLS terminator in front of a platform would be: it ends TLS
 * (ALPN h2), reads the client's frames and passes every byte to Node's own h2c server behind it
 * (nghttp2 decodes what the client sent), except where a test tells it to misbehave:
 *
 * - `refuse`: its HPACK policy refuses an `authorization` field the client let it index (a strict
 *   front that insists on RFC 7541 7.1.3's never-indexed bearer): it answers a GOAWAY or an
 *   RST_STREAM with the given code and debug text and stops passing frames, as a server whose
 *   decoder failed does. Nothing of a refused block reaches the server behind.
 * - `corrupt`: its first `times` connections answer the client's first flight with `bytes` (a
 *   corrupt or truncated frame) and close; nothing of them reaches the server behind.
 *
 * It keeps the connection's HPACK context with the project's decoder only to see how `authorization`
 * came; the decode that counts is the server's behind it.
 */
import { createServer as createH2cServer, type IncomingHttpHeaders, type ServerHttp2Session } from 'node:http2';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import { onTestFinished } from 'vitest';
import { HpackDecoder } from '../../../src/platform/transport/hpack/decoder.js';
import { makeThrowawayCa } from '../../../src/sim/throwaway-ca.js';
import { tempDir } from '../../helpers/tmp.js';

export type FrontMisbehaviour =
  | { kind: 'refuse'; frame: 'GOAWAY' | 'RST_STREAM'; code: number; debug?: string }
  | { kind: 'corrupt'; bytes: Buffer; times: number };

export interface H2Front {
  origin: string;
  caFile: string;
  /** Request headers as the server behind decoded them, in arrival order. */
  seen: IncomingHttpHeaders[];
  /** How many requests carried each x-event-id (the server behind counted them). */
  deliveries: Map<string, number>;
  /** Connections the front accepted, and how each sent `authorization` ('indexed' / 'incremental' / 'never' ...). */
  connections: { authorization: string[] }[];
  refusals: number;
  corruptions: number;
}

const PREFACE_LENGTH = 24;

export async function h2Front(misbehaviour?: FrontMisbehaviour): Promise<H2Front> {
  const ca = makeThrowawayCa(tempDir('ta-front-ca-'));
  const front: H2Front = { origin: '', caFile: ca.caFile, seen: [], deliveries: new Map(), connections: [], refusals: 0, corruptions: 0 };
  const backend = createH2cServer({ settings: { maxHeaderListSize: 1 << 20 } }, (req, res) => {
    front.seen.push(req.headers);
    const id = String(req.headers['x-event-id'] ?? '');
    if (id) front.deliveries.set(id, (front.deliveries.get(id) ?? 0) + 1);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  const sessions = new Set<ServerHttp2Session>();
  backend.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const backendPort = (backend.address() as AddressInfo).port;
  const sockets = new Set<net.Socket>();

  const server = tls.createServer({ key: ca.key, cert: ca.cert, ALPNProtocols: ['h2'] }, (client) => {
    const conn = { authorization: [] as string[] };
    front.connections.push(conn);
    sockets.add(client);
    client.on('error', () => undefined);
    if (misbehaviour?.kind === 'corrupt' && front.corruptions < misbehaviour.times) {
      // The client's first flight (preface, SETTINGS, its first request) goes nowhere.
      front.corruptions++;
      const bytes = misbehaviour.bytes;
      client.once('data', () => client.end(bytes));
      return;
    }
    const behind = net.connect(backendPort, '127.0.0.1');
    sockets.add(behind);
    behind.on('error', () => undefined);
    client.on('close', () => behind.destroy());
    behind.on('close', () => client.destroy());
    let stopped = false;
    const decoder = new HpackDecoder({ limit: 1 << 20 });
    let buf = Buffer.alloc(0);
    let prefaceLeft = PREFACE_LENGTH;
    let block: { streamId: number; fragments: Buffer[] } | undefined;

    const stop = (toClient: Buffer): void => {
      stopped = true;
      behind.destroy();
      client.end(toClient);
    };

    client.on('data', (chunk: Buffer) => {
      if (stopped) return;
      buf = Buffer.concat([buf, chunk]);
      const pass: Buffer[] = [];
      if (prefaceLeft > 0) {
        const n = Math.min(prefaceLeft, buf.length);
        pass.push(buf.subarray(0, n));
        buf = buf.subarray(n);
        prefaceLeft -= n;
      }
      while (prefaceLeft === 0 && buf.length >= 9) {
        const length = buf.readUIntBE(0, 3);
        if (buf.length < 9 + length) break;
        const frame = buf.subarray(0, 9 + length);
        buf = buf.subarray(9 + length);
        const [type, flags] = [frame[3]!, frame[4]!];
        const streamId = frame.readUInt32BE(5) & 0x7fff_ffff;
        if (type === 0x1 || type === 0x9) {
          let payload = frame.subarray(9);
          if (type === 0x1) {
            let start = 0;
            let end = payload.length;
            if (flags & 0x8) {
              end -= payload[0]!;
              start = 1;
            }
            if (flags & 0x20) start += 5;
            payload = payload.subarray(start, end);
            block = { streamId, fragments: [] };
          }
          block!.fragments.push(Buffer.from(payload));
          if (flags & 0x4) {
            const fields = decoder.decode(Buffer.concat(block!.fragments));
            const auth = fields.find((f) => f.name === 'authorization');
            if (auth) conn.authorization.push(auth.representation);
            const indexed = auth !== undefined && (auth.representation === 'indexed' || auth.representation === 'incremental');
            if (misbehaviour?.kind === 'refuse' && indexed) {
              front.refusals++;
              // What was passed before this block still goes to the server behind.
              if (pass.length > 0) behind.write(Buffer.concat(pass));
              const refusal =
                misbehaviour.frame === 'GOAWAY'
                  ? goaway(0, misbehaviour.code, misbehaviour.debug ?? '')
                  : frameOf(0x3, 0, block!.streamId, u32(misbehaviour.code));
              if (misbehaviour.frame === 'GOAWAY') return stop(Buffer.concat([frameOf(0x4, 0, 0, Buffer.alloc(0)), refusal]));
              // A reset stream only: its frames are dropped, the connection goes on.
              client.write(refusal);
              block = undefined;
              continue;
            }
            block = undefined;
          }
        }
        pass.push(frame);
      }
      if (pass.length > 0) behind.write(Buffer.concat(pass));
    });
    behind.on('data', (chunk: Buffer) => {
      if (!stopped) client.write(chunk);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTestFinished(async () => {
    for (const s of sockets) s.destroy();
    for (const s of sessions) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
    await new Promise<void>((r) => backend.close(() => r()));
  });
  front.origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return front;
}

export function frameOf(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(9);
  h.writeUIntBE(payload.length, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(streamId, 5);
  return Buffer.concat([h, payload]);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

function goaway(lastStreamId: number, code: number, debug: string): Buffer {
  return frameOf(0x7, 0, 0, Buffer.concat([u32(lastStreamId), u32(code), Buffer.from(debug, 'latin1')]));
}
