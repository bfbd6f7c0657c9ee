// The parser thread's side: reads a manifest file, parses it with parseManifest, fingerprints
// each object and sends them back in chunks. A large file's YAML parse (seconds for 8 MB) stays
// off the event loop; each chunk deserializes there in a few milliseconds, and the next chunk is
// sent only when the event loop acknowledges the last one (a port delivers every queued message
// in one turn, so 40 chunks sent at once held the loop as long as one big message would).
// Nothing here touches the store or the logger.

import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { fingerprintOf } from './canonical';
import { MAX_MANIFEST_BYTES, ManifestError, parseManifest, TOO_LARGE } from './manifest';
import type { FingerprintedObject, ParseAck, ParseReply, ParseRequest, ParseResult } from './parse-protocol';

/** Objects per message: ~1 KB objects make a chunk of a few hundred KB, a few ms to deserialize. */
export const PARSE_CHUNK_OBJECTS = 200;

type Read = { text: string; hash: string } | { tooLarge: true; hash: string } | 'missing';

/** Reads at most MAX_MANIFEST_BYTES + 1 bytes: a file larger than the limit is never read whole. */
function readBounded(abs: string): Read {
  let fd: number;
  try {
    fd = openSync(abs, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'missing';
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (st.size > MAX_MANIFEST_BYTES) return { tooLarge: true, hash: `too-large:${st.size}:${st.mtimeMs}` };
    const buf = Buffer.allocUnsafe(st.size + 1);
    let length = 0;
    for (let n = -1; n !== 0 && length < buf.length; length += n)
      n = readSync(fd, buf, length, buf.length - length, null);
    // It grew past the limit between fstat and read.
    if (length > MAX_MANIFEST_BYTES) return { tooLarge: true, hash: `too-large:${length}:${st.mtimeMs}` };
    const bytes = buf.subarray(0, length);
    return { text: bytes.toString('utf8'), hash: createHash('sha256').update(bytes).digest('base64') };
  } finally {
    closeSync(fd);
  }
}

function run(req: ParseRequest, send: (reply: ParseReply) => void): ParseResult {
  let read: Read;
  try {
    read = readBounded(req.abs);
  } catch (err) {
    return { type: 'failed', hash: '', line: 1, message: (err as Error).message };
  }
  if (read === 'missing') return { type: 'missing' };
  if (read.hash === req.knownHash) return { type: 'unchanged', hash: read.hash };
  if ('tooLarge' in read) return { type: 'failed', hash: read.hash, line: 1, message: TOO_LARGE };
  try {
    const parsed = parseManifest(read.text, req.file);
    for (let i = 0; i < parsed.objects.length; i += PARSE_CHUNK_OBJECTS) {
      const objects: FingerprintedObject[] = parsed.objects
        .slice(i, i + PARSE_CHUNK_OBJECTS)
        .map((o) => ({ ...o, fingerprint: fingerprintOf(o.object) }));
      send({ id: req.id, objects });
    }
    return { type: 'parsed', hash: read.hash, skipped: parsed.skipped };
  } catch (err) {
    if (err instanceof ManifestError) return { type: 'failed', hash: read.hash, line: err.line, message: err.reason };
    // A bug or an input the limits did not foresee: the file is refused, the thread lives on.
    return { type: 'failed', hash: read.hash, line: 1, message: `cannot be loaded: ${(err as Error).message}` };
  }
}

if (parentPort) {
  const port = parentPort;
  const inbox: ParseRequest[] = [];
  const outbox: ParseReply[] = [];
  let awaitingAck = false;
  const flush = () => {
    while (!awaitingAck) {
      const reply = outbox.shift();
      if (reply) {
        port.postMessage(reply);
        awaitingAck = 'objects' in reply;
        continue;
      }
      const req = inbox.shift();
      if (!req) return;
      const done = run(req, (r) => outbox.push(r));
      outbox.push({ id: req.id, done });
    }
  };
  port.on('message', (m: ParseRequest | ParseAck) => {
    if ('ack' in m) awaitingAck = false;
    else inbox.push(m);
    flush();
  });
  // Starting the thread is not parsing: the time limit runs from here.
  port.postMessage({ ready: true } satisfies ParseReply);
}
