/**
 * What an HTTP/2 server did to a request, read from the error undici and Node raise.
 * RST_STREAM and GOAWAY are the server's words, not a failed connection: status and the log name
 * the frame and its error code (RFC 9113 section 7), and REFUSED_STREAM carries the server's
 * promise that nothing of the request was processed (RFC 9113 section 8.7), so it can go again at
 * once.
 */

/** RFC 9113 section 7, by code. */
const H2_ERROR_NAMES = [
  'NO_ERROR',
  'PROTOCOL_ERROR',
  'INTERNAL_ERROR',
  'FLOW_CONTROL_ERROR',
  'SETTINGS_TIMEOUT',
  'STREAM_CLOSED',
  'FRAME_SIZE_ERROR',
  'REFUSED_STREAM',
  'CANCEL',
  'COMPRESSION_ERROR',
  'CONNECT_ERROR',
  'ENHANCE_YOUR_CALM',
  'INADEQUATE_SECURITY',
  'HTTP_1_1_REQUIRED',
] as const;

export interface H2Refusal {
  frame: 'RST_STREAM' | 'GOAWAY';
  /** The error code's name (REFUSED_STREAM, CANCEL, ...); `CANCEL or NO_ERROR` when Node does not say which. */
  code: string;
  /** RST_STREAM REFUSED_STREAM: the server processed nothing of the request. */
  notProcessed: boolean;
}

function codeName(n: number): string {
  return H2_ERROR_NAMES[n] ?? `code ${n}`;
}

/** The HTTP/2 frame behind a network error, or undefined when it was something else. */
export function h2Refusal(e: unknown): H2Refusal | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 5 && cur && typeof cur === 'object'; i++) {
    const message = String((cur as { message?: unknown }).message ?? '');
    // Node: a stream the peer reset with a code other than NO_ERROR and CANCEL.
    let m = /Stream closed with error code NGHTTP2_([A-Z_0-9]+)/.exec(message);
    if (m) return rst(m[1]!);
    // undici, for streams whose reset it reports by number.
    m = /"stream error" received - code (\d+)/.exec(message);
    if (m) return rst(codeName(Number(m[1])));
    m = /"GOAWAY" frame received with code (\d+)/.exec(message);
    if (m) return { frame: 'GOAWAY', code: codeName(Number(m[1])), notProcessed: false };
    // Node closes a stream reset with CANCEL (or NO_ERROR) without an error; undici then says this.
    if (message.includes('HTTP/2: stream closed before the response was complete'))
      return { frame: 'RST_STREAM', code: 'CANCEL or NO_ERROR', notProcessed: false };
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

function rst(name: string): H2Refusal {
  return { frame: 'RST_STREAM', code: name, notProcessed: name === 'REFUSED_STREAM' };
}

/** "reset the HTTP/2 stream (RST_STREAM REFUSED_STREAM: not processed)", for error messages. */
export function describeH2Refusal(r: H2Refusal): string {
  if (r.frame === 'GOAWAY') return `closed the HTTP/2 connection (GOAWAY ${r.code})`;
  return `reset the HTTP/2 stream (RST_STREAM ${r.code}${r.notProcessed ? ': not processed' : ''})`;
}
