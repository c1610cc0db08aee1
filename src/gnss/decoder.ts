/**
 * The synchronous decoder: lines (or raw chunks) in, epochs out as fixes. No I/O, no timers:
 * `nmea decode`, the pipeline, the benchmark and the tests all use it.
 */
import { EpochAssembler, type EpochAssemblerOptions, type EpochCounters } from './epochs.js';
import type { Fix, SatelliteInView } from '../fix/fix.js';
import { LineSplitter, type LineSplitterCounters } from './line-splitter.js';
import { decodeFrame } from './sentences/decode.js';
import { frameSentence, type FrameRejection } from './sentences/frame.js';
import type { SentenceKind } from './sentences/types.js';
import { CONFIG_DEFAULTS } from '../config/defaults.js';
import { textOfTxt } from './health/antenna.js';

export interface SentenceCounters {
  /** Sentences decoded and used, per type. */
  decoded: Partial<Record<SentenceKind, number>>;
  /** Lines that were not a valid frame, per reason (badChecksum, noStart, ...). */
  rejected: Partial<Record<FrameRejection, number>>;
  /** Frames accepted without a checksum (old receivers send none). */
  withoutChecksum: number;
  /** Sentence types the pipeline does not use (GST, HDT, TXT, ...). */
  unknown: number;
  proprietary: number;
  /** Known types with too few fields or impossible values. */
  malformed: number;
}

export interface DecoderCounters {
  lines: LineSplitterCounters;
  sentences: SentenceCounters;
  epochs: EpochCounters;
}

export interface DecoderOptions extends EpochAssemblerOptions {
  /** Longest line kept by `pushChunk` (config `gnss.maxLineLength`). */
  maxLineLength?: number;
  /** Called for each epoch as it is emitted, in addition to the arrays `push` returns. */
  onFix?: (fix: Fix) => void;
  /** The text of each TXT sentence (receiver notices: the antenna's state), still counted as unknown. */
  onText?: (text: string) => void;
}

export interface Decoder {
  /** One line (CR/LF optional). Returns the epochs it completed, usually none or one. */
  push(line: string): Fix[];
  /** Raw bytes, split into lines with the maximum line length enforced. */
  pushChunk(chunk: Uint8Array | string): Fix[];
  /** End of input: the unterminated last line and the epoch in progress. */
  flush(): Fix[];
  readonly counters: DecoderCounters;
  /** Satellites in view now (all constellations), for the status tools. */
  satellites(): SatelliteInView[];
}

const NONE: Fix[] = [];

export function createDecoder(options: DecoderOptions = {}): Decoder {
  const splitter = new LineSplitter(options.maxLineLength ?? CONFIG_DEFAULTS.gnss.maxLineLength);
  const sentences: SentenceCounters = { decoded: {}, rejected: {}, withoutChecksum: 0, unknown: 0, proprietary: 0, malformed: 0 };
  let out: Fix[] = NONE;
  const assembler = new EpochAssembler((fix) => {
    if (out === NONE) out = [];
    out.push(fix);
    options.onFix?.(fix);
  }, options);

  const line = (text: string): void => {
    const frame = frameSentence(text);
    if (typeof frame === 'string') {
      sentences.rejected[frame] = (sentences.rejected[frame] ?? 0) + 1;
      return;
    }
    if (!frame.checksum) sentences.withoutChecksum++;
    const s = decodeFrame(frame);
    if (typeof s === 'string') {
      sentences[s]++;
      if (frame.type === 'TXT' && options.onText) options.onText(textOfTxt(frame.fields));
      return;
    }
    sentences.decoded[s.kind] = (sentences.decoded[s.kind] ?? 0) + 1;
    assembler.add(s);
  };

  const take = (): Fix[] => {
    const r = out;
    out = NONE;
    return r;
  };

  return {
    push(text: string): Fix[] {
      splitter.counters.lines++;
      splitter.counters.bytes += text.length;
      line(text);
      return take();
    },
    pushChunk(chunk: Uint8Array | string): Fix[] {
      splitter.push(chunk, line);
      return take();
    },
    flush(): Fix[] {
      splitter.end(line);
      assembler.flush();
      return take();
    },
    counters: { lines: splitter.counters, sentences, epochs: assembler.counters },
    satellites: () => assembler.sky.current(),
  };
}
