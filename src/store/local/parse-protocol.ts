// Messages between the local source's event loop and its parser thread. Types only.

import type { ParsedObject, SkippedDocument } from './manifest';

export interface ParseRequest {
  id: number;
  /** Relative path, the name used in errors. */
  file: string;
  abs: string;
  /** Content hash of the last read; equal content is answered `unchanged` without parsing. */
  knownHash?: string | undefined;
}

/** A parsed object with its fingerprint (a digest of its canonical JSON), computed on the thread. */
export interface FingerprintedObject extends ParsedObject {
  fingerprint: string;
}

export type { SkippedDocument };

export type ParseResult =
  | { type: 'missing' }
  | { type: 'unchanged'; hash: string }
  | { type: 'parsed'; hash: string; skipped: SkippedDocument[] }
  | { type: 'failed'; hash: string; line: number; message: string };

/** To the thread: the chunk of objects it sent last has been taken; it may send the next. */
export interface ParseAck {
  ack: number;
}

/** From the thread: objects of a job in chunks, then one `done` with the result. */
export type ParseReply =
  { ready: true } | { id: number; objects: FingerprintedObject[] } | { id: number; done: ParseResult };
