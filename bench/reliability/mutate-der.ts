// Structural mutations of DER: the bytes are read into a tree of TLVs (constructed tags have
// children), an element is dropped, repeated, swapped, re-tagged, emptied, nested deeper or given
// boundary content, and the tree is written back, now and then with a length form DER forbids
// (long form for short lengths, indefinite, oversized counts) or a length that lies.

import type { Rng } from './prng';

interface DerNode {
  tag: number;
  children?: DerNode[];
  content?: Buffer;
}

/** Deepest level read into a tree; deeper content stays opaque. */
const MAX_TREE_DEPTH = 24;
/** Most elements read from one input. */
const MAX_TREE_NODES = 5000;
/** Nesting a "deepen" mutation adds (the reader's bound is 16 levels). */
const DEEPEN = [2, 16, 17];
const DEEPEN_EXTREME = [100, 1000];

function parse(buf: Buffer): DerNode[] | undefined {
  let nodes = 0;
  const read = (start: number, end: number, depth: number): DerNode[] | undefined => {
    const out: DerNode[] = [];
    let pos = start;
    while (pos < end) {
      if (++nodes > MAX_TREE_NODES || pos + 2 > end) return undefined;
      const tag = buf[pos]!;
      let len = buf[pos + 1]!;
      let at = pos + 2;
      if (len >= 0x80) {
        const n = len & 0x7f;
        if (n === 0 || n > 4 || at + n > end) return undefined;
        len = 0;
        for (let i = 0; i < n; i++) len = len * 256 + buf[at + i]!;
        at += n;
      }
      if (at + len > end) return undefined;
      const body = buf.subarray(at, at + len);
      const kids = tag & 0x20 && depth < MAX_TREE_DEPTH ? read(at, at + len, depth + 1) : undefined;
      out.push(kids ? { tag, children: kids } : { tag, content: body });
      pos = at + len;
    }
    return out;
  };
  return read(0, buf.length, 0);
}

function lengthBytes(rng: Rng | undefined, n: number): Buffer {
  if (rng?.chance(0.02)) {
    switch (rng.int(4)) {
      case 0:
        return Buffer.from([0x81, n & 0xff]); // long form (non-minimal when short)
      case 1:
        return Buffer.from([0x80]); // indefinite
      case 2:
        return Buffer.from([0x84, 0, 0, (n >> 8) & 0xff, n & 0xff]); // leading zero bytes
      default:
        return Buffer.from([0x82, 0xff, 0xff]); // a length that lies
    }
  }
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function encode(node: DerNode, rng?: Rng): Buffer {
  const body = node.children
    ? Buffer.concat(node.children.map((c) => encode(c, rng)))
    : (node.content ?? Buffer.alloc(0));
  return Buffer.concat([Buffer.from([node.tag]), lengthBytes(rng, body.length), body]);
}

function allNodes(roots: DerNode[]): { parent: DerNode[]; index: number }[] {
  const out: { parent: DerNode[]; index: number }[] = [];
  const stack: DerNode[][] = [roots];
  while (stack.length > 0) {
    const list = stack.pop()!;
    list.forEach((n, index) => {
      out.push({ parent: list, index });
      if (n.children) stack.push(n.children);
    });
  }
  return out;
}

const TAGS = [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x0c, 0x13, 0x16, 0x17, 0x1f, 0x30, 0x31, 0xa0, 0xa3, 0xff];
const CONTENTS = (rng: Rng): Buffer =>
  rng.pick([
    () => Buffer.alloc(0),
    () => Buffer.from([0]),
    () => Buffer.from([0xff]),
    () => Buffer.from([0x80, 0x00]),
    () => Buffer.from([0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]), // the P-256 OID
    () => Buffer.from([0x2a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]), // an OID arc beyond 2^53
    () => Buffer.alloc(rng.scale([65, 256, 1025], [70000]), 0xff),
    () => rng.bytes(rng.size(600)),
  ])();

/** One to three structural mutations of a DER document; plain byte noise when it does not parse. */
export function mutateDer(rng: Rng, der: Buffer): Buffer {
  const roots = parse(der);
  if (!roots || roots.length === 0) {
    const out = Buffer.from(der);
    if (out.length > 0) out[rng.int(out.length)] = rng.int(256);
    return out;
  }
  for (let m = 1 + rng.int(3); m > 0; m--) {
    const slots = allNodes(roots);
    const { parent, index } = rng.pick(slots);
    const node = parent[index]!;
    switch (rng.int(9)) {
      case 0:
        if (parent.length > 1) parent.splice(index, 1);
        break;
      case 1:
        parent.splice(index, 0, ...Array.from({ length: rng.scale([1, 1, 2], [4100]) }, () => node));
        break;
      case 2: {
        const j = rng.int(parent.length);
        parent[index] = parent[j]!;
        parent[j] = node;
        break;
      }
      case 3:
        parent[index] = { ...node, tag: rng.pick(TAGS) };
        break;
      case 4:
        parent[index] = { tag: node.tag, content: CONTENTS(rng) };
        break;
      case 5: {
        let n: DerNode = node;
        for (let d = rng.scale(DEEPEN, DEEPEN_EXTREME); d > 0; d--) n = { tag: 0x30, children: [n] };
        parent[index] = n;
        break;
      }
      case 6:
        parent.splice(index + rng.int(2), 0, { tag: rng.pick(TAGS), content: CONTENTS(rng) });
        break;
      case 7: // primitive content re-read as DER (BIT STRING keys, OCTET STRING extensions)
        if (node.content && node.content.length > 1) {
          const inner = node.tag === 0x03 ? node.content.subarray(1) : node.content;
          const mutated = mutateDer(rng, inner);
          parent[index] = {
            tag: node.tag,
            content: node.tag === 0x03 ? Buffer.concat([Buffer.from([0]), mutated]) : mutated,
          };
        }
        break;
      default:
        if (node.content && node.content.length > 0)
          parent[index] = { tag: node.tag, content: node.content.subarray(0, rng.int(node.content.length)) };
    }
  }
  let out = Buffer.concat(roots.map((r) => encode(r, rng)));
  if (rng.chance(0.05)) out = out.subarray(0, rng.int(out.length));
  if (rng.chance(0.03)) out = Buffer.concat([out, rng.bytes(rng.size(16))]);
  return out;
}
