// Reading a large DeltaDiscoveryRequest as its DATA frames arrive. grpc-js gathers a message's
// DATA chunks and concatenates them into one buffer before decoding it: for a reconnecting
// ztunnel's 5.7 MB initial_resource_versions (100k names), a 5.7 MB copy and as much new
// external memory per reconnect, on top of the chunks themselves, which is what brings V8's next
// scavenge and major GC forward. This framer takes grpc-js's place on a Delta stream (transport.ts)
// and, for a large message, digests the entries in the chunks themselves as they come; at the
// message's end it hands grpc-js a compact message holding only the other fields, and the digest
// beside it. Anything it does not expect (a compressed message, a field of another wire type, a
// limit reached) makes it keep the chunks and hand over the whole message as grpc-js would, to
// be decoded (and refused) by decodeDeltaRequest exactly as before.

import { MAX_RESOURCE_NAMES_PER_REQUEST, MAX_RESOURCE_NAME_BYTES, MAX_RESOURCE_VERSION_BYTES } from './client-limits';
import { EntryRanges, entryRanges, newEntryRanges } from './irv-entry';
import {
  VersionDigest,
  bytesView,
  digestCanonicalEntry,
  digestEntryIn,
  digestEntryRun,
  emptyDigest,
} from './version-digest';

/** What grpc-js's StreamDecoder is to its server call: DATA chunks in, whole framed messages (5-byte prefix) out. */
export interface MessageFramer {
  write(data: Buffer): Buffer[];
}

/**
 * Messages shorter than this are gathered and concatenated whole, as grpc-js does (ACKs, NACKs,
 * first requests without held versions): the concatenation costs less than reading them twice.
 */
export const STREAMED_REQUEST_MIN_BYTES = 64 * 1024;

/** initial_resource_versions of a streamed request, digested; the whole message is assembled only if asked for. */
export interface Predigest {
  digest: VersionDigest;
  /** The message as the client sent it (without the gRPC prefix), concatenated on this call. */
  readonly whole: () => Buffer;
}

/**
 * Compact messages made by a framer, by their ArrayBuffer (each has one of its own; grpc-js hands
 * the decoder a view of it past the prefix), with their digest.
 */
const predigested = new WeakMap<ArrayBufferLike, Predigest>();

/** The digest a framer left beside the message `body` (what the decoder is handed), if it made it. */
export function takePredigest(body: Buffer): Predigest | undefined {
  const p = predigested.get(body.buffer);
  if (!p || body.byteOffset !== PREFIX_BYTES || body.byteLength !== body.buffer.byteLength - PREFIX_BYTES)
    return undefined;
  predigested.delete(body.buffer);
  return p;
}

const PREFIX_BYTES = 5;
const IRV_TAG = (5 << 3) | 2;
/** An entry longer than a name, a version and their tags and lengths at the limits is left to the decoder. */
const MAX_ENTRY_BYTES = MAX_RESOURCE_NAME_BYTES + MAX_RESOURCE_VERSION_BYTES + 8;

type Stage = 'tag' | 'length' | 'payload';

/**
 * The top level of one message being read: where each field starts and ends (offsets in the
 * message body), entries digested, other fields' byte ranges kept for the compact message.
 */
class StreamedMessage {
  readonly chunks: Buffer[] = [];
  /** Body offsets [start, end) of the fields other than initial_resource_versions. */
  readonly kept: number[] = [];
  readonly digest = emptyDigest();
  /** False once something unexpected was seen: the whole message goes to the decoder. */
  streamed = true;
  private pos = 0;
  private stage: Stage = 'tag';
  private varint = 0;
  private varintMul = 1;
  private varintBytes = 0;
  private fieldStart = 0;
  private tag = 0;
  /** Body offsets where the current field's payload starts and ends. */
  private headerEnd = 0;
  private payloadEnd = 0;
  private names = 0;
  /** An entry split between two chunks, gathered here. */
  private entryBuf: Buffer | undefined;
  private entryFill = 0;
  private readonly entry: EntryRanges = newEntryRanges();

  constructor(readonly size: number) {}

  /** Takes the next chunk of the body (the caller keeps it in `chunks`). */
  add(chunk: Buffer): void {
    this.chunks.push(chunk);
    if (this.streamed) this.read(chunk);
  }

  /** Whether the body ended on a field boundary with everything read as expected. */
  complete(): boolean {
    return this.streamed && this.stage === 'tag' && this.varintBytes === 0 && this.pos === this.size;
  }

  private read(chunk: Buffer): void {
    let at = 0;
    const n = chunk.length;
    while (at < n) {
      if (this.stage === 'tag' && this.varintBytes === 0) {
        at = this.entriesInPlace(chunk, at);
        if (!this.streamed || at >= n) return;
      }
      if (this.stage === 'payload') {
        const take = Math.min(this.payloadEnd - this.pos, n - at);
        if (this.tag === IRV_TAG) {
          const entryLength = this.payloadEnd - this.headerEnd;
          if (this.entryBuf === undefined && take === entryLength) {
            // The whole entry is in this chunk: digested where it is.
            if (!this.digestAt(chunk, at, at + take)) return;
          } else {
            this.entryBuf ??= Buffer.allocUnsafe(entryLength);
            chunk.copy(this.entryBuf, this.entryFill, at, at + take);
            this.entryFill += take;
            if (this.entryFill === entryLength) {
              const gathered = this.entryBuf;
              this.entryBuf = undefined;
              this.entryFill = 0;
              if (!this.digestAt(gathered, 0, entryLength)) return;
            }
          }
        }
        at += take;
        this.pos += take;
        if (this.pos === this.payloadEnd) {
          if (this.tag !== IRV_TAG) this.kept.push(this.fieldStart, this.pos);
          this.stage = 'tag';
        }
        continue;
      }
      const b = chunk[at++] ?? 0;
      if (this.varintBytes === 0 && this.stage === 'tag') this.fieldStart = this.pos;
      this.pos++;
      this.varint += (b & 0x7f) * this.varintMul;
      this.varintMul *= 128;
      if (++this.varintBytes > 5) {
        this.abandon();
        return;
      }
      if (b >= 0x80) continue;
      const value = this.varint;
      this.varint = 0;
      this.varintMul = 1;
      this.varintBytes = 0;
      if (this.stage === 'tag') {
        // Only length-delimited fields are expected at the top level of a request.
        if ((value & 7) !== 2) {
          this.abandon();
          return;
        }
        this.tag = value;
        this.stage = 'length';
        continue;
      }
      if (this.pos + value > this.size) {
        this.abandon();
        return;
      }
      const field = this.tag >>> 3;
      if (field >= 3 && field <= 5 && ++this.names > MAX_RESOURCE_NAMES_PER_REQUEST) {
        this.abandon();
        return;
      }
      if (this.tag === IRV_TAG && value > MAX_ENTRY_BYTES) {
        this.abandon();
        return;
      }
      this.headerEnd = this.pos;
      this.payloadEnd = this.pos + value;
      this.stage = 'payload';
      if (value === 0) {
        if (this.tag === IRV_TAG) {
          // An empty entry: an empty name and version, digested as the decoder does.
          const empty = Buffer.alloc(0);
          if (!this.digestAt(empty, 0, 0)) return;
        } else this.kept.push(this.fieldStart, this.pos);
        this.stage = 'tag';
      }
    }
  }

  /**
   * Digests the run of entries starting at `at` that lie wholly in this chunk with one-byte tags
   * and lengths in the canonical form (what every encoder writes for them), in the WebAssembly
   * module of version-digest.ts, which walks them itself. Returns where the run ends; read() takes
   * the rest (an entry cut by the chunk's end, another field, anything unusual).
   */
  private entriesInPlace(chunk: Buffer, at: number): number {
    const before = this.digest.count;
    const end = digestEntryRun(this.digest, chunk, at, chunk.length);
    this.names += this.digest.count - before;
    if (this.names > MAX_RESOURCE_NAMES_PER_REQUEST) {
      this.abandon();
      return end;
    }
    this.pos += end - at;
    return end;
  }

  /** Digests the entry at [start, end) of `buf`; false (and the message abandoned) if a limit is reached. */
  private digestAt(buf: Buffer, start: number, end: number): boolean {
    const e = this.entry;
    entryRanges(buf, start, end, e);
    if (e.keyEnd - e.keyStart > MAX_RESOURCE_NAME_BYTES || e.valueEnd - e.valueStart > MAX_RESOURCE_VERSION_BYTES) {
      this.abandon();
      return false;
    }
    // Key then value, two-byte headers (a one-byte tag is 0x0a or 0x12 here), nothing else: the
    // canonical form, hashed as it lies (an entry cut by a chunk's end, one per chunk).
    if (e.keyStart === start + 2 && e.valueStart === e.keyEnd + 2 && e.valueEnd === end)
      digestCanonicalEntry(this.digest, buf, start, end);
    else digestEntryIn(this.digest, bytesView(buf), e.keyStart, e.keyEnd, e.valueStart, e.valueEnd, 1);
    return true;
  }

  private abandon(): void {
    this.streamed = false;
    this.entryBuf = undefined;
  }
}

/**
 * grpc-js's message framing for one Delta stream, reading large requests as they arrive. Framing
 * errors and the size limit behave as grpc-js's StreamDecoder (the same error, which grpc-js turns
 * into RESOURCE_EXHAUSTED).
 */
export class DeltaRequestFramer implements MessageFramer {
  private readonly prefix = Buffer.alloc(PREFIX_BYTES);
  private prefixFill = 0;
  private remaining = 0;
  /** The message being read: its chunks, and the streamed reading when it is large and uncompressed. */
  private parts: Buffer[] = [];
  private streamed: StreamedMessage | undefined;

  constructor(
    /** grpc.max_receive_message_length (-1: none), as grpc-js's decoder had it. */
    private readonly maxLength: number,
  ) {}

  write(data: Buffer): Buffer[] {
    const out: Buffer[] = [];
    let at = 0;
    while (at < data.length) {
      if (this.prefixFill < PREFIX_BYTES) {
        const take = Math.min(PREFIX_BYTES - this.prefixFill, data.length - at);
        data.copy(this.prefix, this.prefixFill, at, at + take);
        this.prefixFill += take;
        at += take;
        if (this.prefixFill < PREFIX_BYTES) break;
        const size = this.prefix.readUInt32BE(1);
        if (this.maxLength !== -1 && size > this.maxLength)
          throw new Error(`Received message larger than max (${size} vs ${this.maxLength})`);
        this.remaining = size;
        this.parts = [];
        this.streamed =
          size >= STREAMED_REQUEST_MIN_BYTES && this.prefix[0] === 0 ? new StreamedMessage(size) : undefined;
        if (size === 0) out.push(this.finish());
        continue;
      }
      const take = Math.min(this.remaining, data.length - at);
      const piece = take === data.length ? data : data.subarray(at, at + take);
      if (this.streamed) this.streamed.add(piece);
      else this.parts.push(piece);
      at += take;
      this.remaining -= take;
      if (this.remaining === 0) out.push(this.finish());
    }
    return out;
  }

  /** The message just completed, framed as grpc-js frames it (its 5-byte prefix, then the body). */
  private finish(): Buffer {
    const size = this.prefix.readUInt32BE(1);
    const streamed = this.streamed;
    const parts = streamed ? streamed.chunks : this.parts;
    this.prefixFill = 0;
    this.parts = [];
    this.streamed = undefined;
    if (!streamed || !streamed.complete()) return Buffer.concat([this.prefix, ...parts], PREFIX_BYTES + size);
    let keptBytes = 0;
    for (let i = 0; i < streamed.kept.length; i += 2)
      keptBytes += (streamed.kept[i + 1] ?? 0) - (streamed.kept[i] ?? 0);
    // A buffer of its own (not from Node's shared pool): its ArrayBuffer identifies it in `predigested`.
    const compact = Buffer.allocUnsafeSlow(PREFIX_BYTES + keptBytes);
    compact[0] = 0;
    compact.writeUInt32BE(keptBytes, 1);
    copyRanges(parts, streamed.kept, compact, PREFIX_BYTES);
    predigested.set(compact.buffer, {
      digest: streamed.digest,
      whole: () => Buffer.concat(parts, size),
    });
    return compact;
  }
}

/** Copies the body ranges [start, end) listed in `ranges` (ascending) from the chunks into `target` at `to`. */
function copyRanges(chunks: readonly Buffer[], ranges: readonly number[], target: Buffer, to: number): void {
  let chunkIndex = 0;
  let chunkStart = 0; // body offset of chunks[chunkIndex]
  for (let r = 0; r < ranges.length; r += 2) {
    let from = ranges[r] ?? 0;
    const end = ranges[r + 1] ?? 0;
    while (from < end) {
      const chunk = chunks[chunkIndex];
      if (!chunk) return;
      if (from >= chunkStart + chunk.length) {
        chunkStart += chunk.length;
        chunkIndex++;
        continue;
      }
      const upto = Math.min(end, chunkStart + chunk.length);
      to += chunk.copy(target, to, from - chunkStart, upto - chunkStart);
      from = upto;
    }
  }
}
