// A hand-written encoder for istio.workload.Address that writes the same bytes as protobufjs'
// `Type.encode(address).finish()` for the messages the builders produce, in one Buffer sized
// beforehand. protobufjs builds a linked list of write operations (an object per field) and
// copies them out at the end; at 100k pods that was ~15% of a from-scratch build.
//
// The rules copied from protobufjs' generated encoder (node_modules/protobufjs/src/encoder.js):
// - fields are written in field-number order, whatever their order in the .proto;
// - a singular field (scalar, message or map) is written when `m.f != null` and it is an own
//   property of m, whatever its value: proto3 defaults (0, '', false, an empty message) are
//   written too when present, which is why the builders leave them out;
// - a repeated field is written when `m.f != null && m.f.length`, own property or not; repeated
//   enums are packed (proto3), repeated strings, bytes and messages are not;
// - a map entry is written for every key of Object.keys(map), its value message even when empty;
// - enums go through int32 (`v | 0`), uint32 through `v >>> 0`;
// - strings shorter than 40 UTF-16 units go through protobufjs' own UTF-8 writer (a lone surrogate
//   becomes its 3-byte form), longer ones through Buffer's (a lone surrogate becomes U+FFFD).
//
// Anything else returns undefined and the caller encodes with protobufjs, so nothing is dropped
// or written differently: a key this encoder does not know (Workload.extensions, a typo), an
// object that is not plain (a protobufjs Message instance reads defaults from its prototype), a
// value of an unexpected type (a string port, base64 text for bytes, a negative enum).
//
// Two passes over the message: the first checks it and computes every nested message's length
// and every string's UTF-8 length, pushed in visiting order onto `lengths`; the second visits in
// the same order and reads them back while writing.

import type {
  Address,
  ApplicationTunnel,
  GatewayAddress,
  LoadBalancing,
  Locality,
  NamespacedHostname,
  NetworkAddress,
  Port,
  PortList,
  Service,
  WeightedWaypoint,
  Workload,
} from './messages';

/**
 * protobufjs writes strings of fewer UTF-16 units than this with its own UTF-8 writer and longer
 * ones with Buffer's; the two differ for a lone surrogate, so non-ASCII strings follow the same
 * split (BufferWriter's writeStringBuffer).
 */
const PROTOBUFJS_JS_UTF8_MAX_UNITS = 40;

/**
 * ASCII strings up to this many characters are copied by a charCodeAt loop; longer ones by
 * Buffer.write, whose native call costs more than the loop for short strings.
 */
const ASCII_LOOP_MAX_CHARS = 64;

/** The field names each message may carry, protobufjs' camelCase; any other key means fallback. */
const KNOWN: Record<string, ReadonlySet<string>> = {
  Address: new Set(['workload', 'service']),
  Workload: new Set([
    'name',
    'namespace',
    'addresses',
    'network',
    'tunnelProtocol',
    'trustDomain',
    'serviceAccount',
    'waypoint',
    'node',
    'canonicalName',
    'canonicalRevision',
    'workloadType',
    'workloadName',
    'nativeTunnel',
    'authorizationPolicies',
    'status',
    'clusterId',
    'networkGateway',
    'uid',
    'hostname',
    'services',
    'applicationTunnel',
    'locality',
    'networkMode',
    'capacity',
  ]),
  Service: new Set([
    'name',
    'namespace',
    'hostname',
    'addresses',
    'ports',
    'subjectAltNames',
    'waypoint',
    'loadBalancing',
    'ipFamilies',
    'canonical',
    'ingressUseWaypoint',
    'weightedWaypoints',
    'visibility',
  ]),
  GatewayAddress: new Set(['hostname', 'address', 'hboneMtlsPort']),
  NamespacedHostname: new Set(['namespace', 'hostname']),
  NetworkAddress: new Set(['network', 'address', 'length']),
  Port: new Set(['servicePort', 'targetPort', 'appProtocol']),
  PortList: new Set(['ports']),
  Locality: new Set(['region', 'zone', 'subzone']),
  ApplicationTunnel: new Set(['protocol', 'port']),
  LoadBalancing: new Set(['routingPreference', 'mode', 'healthPolicy']),
  WeightedWaypoint: new Set(['destination', 'weight']),
  UInt32Value: new Set(['value']),
};

function known(type: string): ReadonlySet<string> {
  const names = KNOWN[type];
  if (!names) throw new Error(`address encoder: no field list for ${type}`);
  return names;
}
const ADDRESS_FIELDS = known('Address');
const WORKLOAD_FIELDS = known('Workload');
const SERVICE_FIELDS = known('Service');
const GATEWAY_ADDRESS_FIELDS = known('GatewayAddress');
const NAMESPACED_HOSTNAME_FIELDS = known('NamespacedHostname');
const NETWORK_ADDRESS_FIELDS = known('NetworkAddress');
const PORT_FIELDS = known('Port');
const PORT_LIST_FIELDS = known('PortList');
const LOCALITY_FIELDS = known('Locality');
const APPLICATION_TUNNEL_FIELDS = known('ApplicationTunnel');
const LOAD_BALANCING_FIELDS = known('LoadBalancing');
const WEIGHTED_WAYPOINT_FIELDS = known('WeightedWaypoint');
const UINT32_VALUE_FIELDS = known('UInt32Value');

const OBJECT_PROTOTYPE: unknown = Object.prototype;

// State of one encode call (encoding is synchronous and never re-entered).
/** Set by the sizing pass when the message holds something this encoder does not handle; false between calls. */
let unsupported = false;
/** Nested message lengths and string UTF-8 lengths, in visiting order. */
let lengths = new Int32Array(256);
let pushed = 0;
let read = 0;

function push(n: number): void {
  if (pushed === lengths.length) {
    const grown = new Int32Array(lengths.length * 2);
    grown.set(lengths);
    lengths = grown;
  }
  lengths[pushed++] = n;
}

function next(): number {
  return lengths[read++] ?? 0;
}

/**
 * Encodes like protobufjs' `encode(address).finish()`, or returns undefined when the message holds
 * a key, a value type or an object kind this encoder does not handle (the caller then uses
 * protobufjs itself).
 */
export function encodeAddressFast(address: Address): Buffer | undefined {
  pushed = 0;
  const size = sizeAddress(address);
  if (isUnsupported()) return undefined;
  const buf = Buffer.allocUnsafe(size);
  read = 0;
  const end = writeAddress(buf, 0, address);
  if (end !== size || read !== pushed)
    throw new Error(`address encoder: wrote ${end} of ${size} bytes, ${read} of ${pushed} lengths`);
  return buf;
}

// ---- checks -------------------------------------------------------------------------------------

/** A message object: plain (its prototype Object.prototype or null) and every key known. */
function isMessage(m: unknown, fields: ReadonlySet<string>): m is object {
  if (typeof m !== 'object' || m === null) return false;
  const proto: unknown = Object.getPrototypeOf(m);
  if (proto !== OBJECT_PROTOTYPE && proto !== null) return false;
  for (const k in m) if (!fields.has(k)) return false;
  return true;
}

/** Reads and clears the flag (a function: the compiler cannot see the sizing pass set it). */
function isUnsupported(): boolean {
  const was = unsupported;
  unsupported = false;
  return was;
}

function fail(): number {
  unsupported = true;
  return 0;
}

// ---- sizes --------------------------------------------------------------------------------------

function varintSize(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

/** UTF-8 length as Buffer.byteLength counts it (a lone surrogate: 3 bytes, like U+FFFD). */
function utf8Length(s: string): number {
  const n = s.length;
  if (n >= ASCII_LOOP_MAX_CHARS) return Buffer.byteLength(s, 'utf8');
  let len = n;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) len += 1;
    else if ((c & 0xfc00) === 0xd800 && i + 1 < n && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      len += 2; // a pair: 2 units, 4 bytes
      i++;
    } else len += 2;
  }
  return len;
}

/** Length prefix and bytes of a string value (its tag not included). */
function stringSize(v: unknown): number {
  if (typeof v !== 'string') return fail();
  const n = utf8Length(v);
  push(n);
  return varintSize(n) + n;
}

function uint32Size(v: unknown): number {
  if (typeof v !== 'number') return fail();
  return varintSize(v >>> 0);
}

/** protobufjs writes an enum as int32: `v | 0`, ten bytes when negative (left to protobufjs). */
function enumSize(v: unknown): number {
  if (typeof v !== 'number' || (v | 0) < 0) return fail();
  return varintSize(v | 0);
}

function boolSize(v: unknown): number {
  return typeof v === 'boolean' ? 1 : fail();
}

function bytesSize(v: unknown): number {
  if (!(v instanceof Uint8Array)) return fail();
  return varintSize(v.length) + v.length;
}

/** Length prefix and body of a nested message; the body length is pushed for the writing pass. */
function messageSize(body: number, slot: number): number {
  lengths[slot] = body;
  return varintSize(body) + body;
}

function reserve(): number {
  const slot = pushed;
  push(0);
  return slot;
}

/** A singular field is present as protobufjs sees it: not null/undefined and an own property. */
function has(m: object, key: string, v: unknown): boolean {
  return v != null && Object.prototype.hasOwnProperty.call(m, key);
}

function sizeAddress(m: Address): number {
  if (!isMessage(m, ADDRESS_FIELDS)) return fail();
  let size = 0;
  if (has(m, 'workload', m.workload)) size += 1 + sizeWorkload(m.workload);
  if (has(m, 'service', m.service)) size += 1 + sizeService(m.service);
  return size;
}

function sizeWorkload(m: unknown): number {
  if (!isMessage(m, WORKLOAD_FIELDS)) return fail();
  const w = m as Workload;
  const slot = reserve();
  let s = 0;
  let v: unknown;
  if (has(w, 'name', (v = w.name))) s += 1 + stringSize(v);
  if (has(w, 'namespace', (v = w.namespace))) s += 1 + stringSize(v);
  if ((v = w.addresses) != null) s += repeatedSize(v, 1, bytesSize);
  if (has(w, 'network', (v = w.network))) s += 1 + stringSize(v);
  if (has(w, 'tunnelProtocol', (v = w.tunnelProtocol))) s += 1 + enumSize(v);
  if (has(w, 'trustDomain', (v = w.trustDomain))) s += 1 + stringSize(v);
  if (has(w, 'serviceAccount', (v = w.serviceAccount))) s += 1 + stringSize(v);
  if (has(w, 'waypoint', (v = w.waypoint))) s += 1 + sizeGatewayAddress(v);
  if (has(w, 'node', (v = w.node))) s += 1 + stringSize(v);
  if (has(w, 'canonicalName', (v = w.canonicalName))) s += 1 + stringSize(v);
  if (has(w, 'canonicalRevision', (v = w.canonicalRevision))) s += 1 + stringSize(v);
  if (has(w, 'workloadType', (v = w.workloadType))) s += 1 + enumSize(v);
  if (has(w, 'workloadName', (v = w.workloadName))) s += 1 + stringSize(v);
  if (has(w, 'nativeTunnel', (v = w.nativeTunnel))) s += 1 + boolSize(v);
  if ((v = w.authorizationPolicies) != null) s += repeatedSize(v, 2, stringSize);
  if (has(w, 'status', (v = w.status))) s += 2 + enumSize(v);
  if (has(w, 'clusterId', (v = w.clusterId))) s += 2 + stringSize(v);
  if (has(w, 'networkGateway', (v = (w as { networkGateway?: unknown }).networkGateway)))
    s += 2 + sizeGatewayAddress(v);
  if (has(w, 'uid', (v = w.uid))) s += 2 + stringSize(v);
  if (has(w, 'hostname', (v = w.hostname))) s += 2 + stringSize(v);
  if (has(w, 'services', (v = w.services))) s += sizeServicesMap(v);
  if (has(w, 'applicationTunnel', (v = w.applicationTunnel))) s += 2 + sizeApplicationTunnel(v);
  if (has(w, 'locality', (v = w.locality))) s += 2 + sizeLocality(v);
  if (has(w, 'networkMode', (v = w.networkMode))) s += 2 + enumSize(v);
  if (has(w, 'capacity', (v = w.capacity))) s += 2 + sizeUInt32Value(v);
  return messageSize(s, slot);
}

function sizeService(m: unknown): number {
  if (!isMessage(m, SERVICE_FIELDS)) return fail();
  const o = m as Service;
  const slot = reserve();
  let s = 0;
  let v: unknown;
  if (has(o, 'name', (v = o.name))) s += 1 + stringSize(v);
  if (has(o, 'namespace', (v = o.namespace))) s += 1 + stringSize(v);
  if (has(o, 'hostname', (v = o.hostname))) s += 1 + stringSize(v);
  if ((v = o.addresses) != null) s += repeatedSize(v, 1, sizeNetworkAddress);
  if ((v = o.ports) != null) s += repeatedSize(v, 1, sizePort);
  if ((v = o.subjectAltNames) != null) s += repeatedSize(v, 1, stringSize);
  if (has(o, 'waypoint', (v = o.waypoint))) s += 1 + sizeGatewayAddress(v);
  if (has(o, 'loadBalancing', (v = o.loadBalancing))) s += 1 + sizeLoadBalancing(v);
  if (has(o, 'ipFamilies', (v = o.ipFamilies))) s += 1 + enumSize(v);
  if (has(o, 'canonical', (v = o.canonical))) s += 1 + boolSize(v);
  if (has(o, 'ingressUseWaypoint', (v = o.ingressUseWaypoint))) s += 1 + boolSize(v);
  if ((v = o.weightedWaypoints) != null) s += repeatedSize(v, 1, sizeWeightedWaypoint);
  if (has(o, 'visibility', (v = o.visibility))) s += 1 + enumSize(v);
  return messageSize(s, slot);
}

/** A non-packed repeated field: each element with its own tag, none when the array is empty. */
function repeatedSize(v: unknown, tagSize: number, element: (e: unknown) => number): number {
  if (!Array.isArray(v)) return fail();
  let s = 0;
  for (let i = 0; i < v.length; i++) {
    const e: unknown = v[i];
    if (e == null) return fail(); // protobufjs would throw or write it oddly: leave it to protobufjs
    s += tagSize + element(e);
  }
  return s;
}

function sizeServicesMap(v: unknown): number {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return fail();
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== OBJECT_PROTOTYPE && proto !== null) return fail();
  const map = v as Record<string, unknown>;
  let s = 0;
  for (const key of Object.keys(map)) {
    const slot = reserve();
    const entry = 1 + stringSize(key) + 1 + sizePortList(map[key]);
    s += 2 + messageSize(entry, slot);
  }
  return s;
}

function sizePortList(m: unknown): number {
  if (!isMessage(m, PORT_LIST_FIELDS)) return fail();
  const slot = reserve();
  const ports = (m as PortList).ports;
  return messageSize(ports != null ? repeatedSize(ports, 1, sizePort) : 0, slot);
}

function sizePort(m: unknown): number {
  if (!isMessage(m, PORT_FIELDS)) return fail();
  const p = m as Port;
  const slot = reserve();
  let s = 0;
  let v: unknown;
  if (has(p, 'servicePort', (v = p.servicePort))) s += 1 + uint32Size(v);
  if (has(p, 'targetPort', (v = p.targetPort))) s += 1 + uint32Size(v);
  if (has(p, 'appProtocol', (v = p.appProtocol))) s += 1 + enumSize(v);
  return messageSize(s, slot);
}

function sizeGatewayAddress(m: unknown): number {
  if (!isMessage(m, GATEWAY_ADDRESS_FIELDS)) return fail();
  const g = m as GatewayAddress;
  const slot = reserve();
  let s = 0;
  let v: unknown;
  if (has(g, 'hostname', (v = g.hostname))) s += 1 + sizeNamespacedHostname(v);
  if (has(g, 'address', (v = g.address))) s += 1 + sizeNetworkAddress(v);
  if (has(g, 'hboneMtlsPort', (v = g.hboneMtlsPort))) s += 1 + uint32Size(v);
  return messageSize(s, slot);
}

function sizeNamespacedHostname(m: unknown): number {
  if (!isMessage(m, NAMESPACED_HOSTNAME_FIELDS)) return fail();
  const h = m as NamespacedHostname;
  const slot = reserve();
  let s = 0;
  let v: unknown;
  if (has(h, 'namespace', (v = h.namespace))) s += 1 + stringSize(v);
  if (has(h, 'hostname', (v = h.hostname))) s += 1 + stringSize(v);
  return messageSize(s, slot);
}

function sizeNetworkAddress(m: unknown): number {
  if (!isMessage(m, NETWORK_ADDRESS_FIELDS)) return fail();
  const a = m as NetworkAddress;
  const slot = reserve();
  let s = 0;
  let v: unknown;
  if (has(a, 'network', (v = a.network))) s += 1 + stringSize(v);
  if (has(a, 'address', (v = a.address))) s += 1 + bytesSize(v);
  if (has(a, 'length', (v = a.length))) s += 1 + uint32Size(v);
  return messageSize(s, slot);
}

function sizeLocality(m: unknown): number {
  if (!isMessage(m, LOCALITY_FIELDS)) return fail();
  const l = m as Locality;
  const slot = reserve();
  let s = 0;
  let v: unknown;
  if (has(l, 'region', (v = l.region))) s += 1 + stringSize(v);
  if (has(l, 'zone', (v = l.zone))) s += 1 + stringSize(v);
  if (has(l, 'subzone', (v = l.subzone))) s += 1 + stringSize(v);
  return messageSize(s, slot);
}

function sizeApplicationTunnel(m: unknown): number {
  if (!isMessage(m, APPLICATION_TUNNEL_FIELDS)) return fail();
  const t = m as ApplicationTunnel;
  const slot = reserve();
  let s = 0;
  let v: unknown;
  if (has(t, 'protocol', (v = t.protocol))) s += 1 + enumSize(v);
  if (has(t, 'port', (v = t.port))) s += 1 + uint32Size(v);
  return messageSize(s, slot);
}

function sizeLoadBalancing(m: unknown): number {
  if (!isMessage(m, LOAD_BALANCING_FIELDS)) return fail();
  const lb = m as LoadBalancing;
  const slot = reserve();
  let s = 0;
  let v: unknown;
  if ((v = lb.routingPreference) != null) {
    if (!Array.isArray(v)) return fail();
    if (v.length) {
      // Packed: one tag, one length, the varints back to back.
      let packed = 0;
      for (let i = 0; i < v.length; i++) packed += enumSize(v[i]);
      push(packed);
      s += 1 + varintSize(packed) + packed;
    }
  }
  if (has(lb, 'mode', (v = lb.mode))) s += 1 + enumSize(v);
  if (has(lb, 'healthPolicy', (v = lb.healthPolicy))) s += 1 + enumSize(v);
  return messageSize(s, slot);
}

function sizeWeightedWaypoint(m: unknown): number {
  if (!isMessage(m, WEIGHTED_WAYPOINT_FIELDS)) return fail();
  const w = m as WeightedWaypoint;
  const slot = reserve();
  let s = 0;
  let v: unknown;
  if (has(w, 'destination', (v = w.destination))) s += 1 + sizeGatewayAddress(v);
  if (has(w, 'weight', (v = w.weight))) s += 1 + uint32Size(v);
  return messageSize(s, slot);
}

function sizeUInt32Value(m: unknown): number {
  if (!isMessage(m, UINT32_VALUE_FIELDS)) return fail();
  const slot = reserve();
  const v = (m as { value?: unknown }).value;
  return messageSize(has(m, 'value', v) ? 1 + uint32Size(v) : 0, slot);
}

// ---- writing ------------------------------------------------------------------------------------
// Each writer takes the position to write at and returns the position after what it wrote. The
// sizing pass has checked every value's type, so values are cast here, not checked again.

function writeVarint(buf: Buffer, pos: number, v: number): number {
  while (v > 0x7f) {
    buf[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[pos++] = v;
  return pos;
}

function writeString(buf: Buffer, pos: number, s: string): number {
  const n = next();
  pos = writeVarint(buf, pos, n);
  const units = s.length;
  if (n === units) {
    // ASCII (UTF-8 is never shorter than UTF-16 and equal only when every unit is below 0x80).
    if (units < ASCII_LOOP_MAX_CHARS) for (let i = 0; i < units; i++) buf[pos + i] = s.charCodeAt(i);
    else buf.write(s, pos, n, 'latin1');
  } else if (units < PROTOBUFJS_JS_UTF8_MAX_UNITS) writeUtf8LikeProtobufjs(buf, pos, s);
  else buf.write(s, pos, n, 'utf8');
  return pos + n;
}

/** protobufjs' own UTF-8 writer (@protobufjs/utf8 write): a lone surrogate gets its 3-byte form. */
function writeUtf8LikeProtobufjs(buf: Buffer, pos: number, s: string): void {
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    let c2: number;
    if (c < 0x80) buf[pos++] = c;
    else if (c < 0x800) {
      buf[pos++] = (c >> 6) | 0xc0;
      buf[pos++] = (c & 0x3f) | 0x80;
    } else if ((c & 0xfc00) === 0xd800 && ((c2 = s.charCodeAt(i + 1)) & 0xfc00) === 0xdc00) {
      c = 0x10000 + ((c & 0x3ff) << 10) + (c2 & 0x3ff);
      i++;
      buf[pos++] = (c >> 18) | 0xf0;
      buf[pos++] = ((c >> 12) & 0x3f) | 0x80;
      buf[pos++] = ((c >> 6) & 0x3f) | 0x80;
      buf[pos++] = (c & 0x3f) | 0x80;
    } else {
      buf[pos++] = (c >> 12) | 0xe0;
      buf[pos++] = ((c >> 6) & 0x3f) | 0x80;
      buf[pos++] = (c & 0x3f) | 0x80;
    }
  }
}

function writeBytes(buf: Buffer, pos: number, v: Uint8Array): number {
  pos = writeVarint(buf, pos, v.length);
  buf.set(v, pos);
  return pos + v.length;
}

/** A one-byte tag (fields 1 to 15): (field << 3) | wire type. */
function tag(buf: Buffer, pos: number, t: number): number {
  buf[pos] = t;
  return pos + 1;
}

/** A tag of field 16 and above: two bytes. */
function tag2(buf: Buffer, pos: number, field: number, wireType: number): number {
  const t = (field << 3) | wireType;
  buf[pos] = (t & 0x7f) | 0x80;
  buf[pos + 1] = t >>> 7;
  return pos + 2;
}

function writeBool(buf: Buffer, pos: number, t: number, v: unknown): number {
  buf[pos] = t;
  buf[pos + 1] = v ? 1 : 0;
  return pos + 2;
}

/** A nested message's length prefix, its length taken from the sizing pass. */
function open(buf: Buffer, pos: number): number {
  return writeVarint(buf, pos, next());
}

/** Wire type of varints (integers, enums, bools). */
const VARINT = 0;
/** Wire type of length-delimited values (strings, bytes, messages, packed repeated). */
const LEN = 2;

function writeAddress(buf: Buffer, pos: number, m: Address): number {
  let v: unknown;
  if (has(m, 'workload', (v = m.workload))) pos = writeWorkload(buf, tag(buf, pos, 0x0a), v as Workload);
  if (has(m, 'service', (v = m.service))) pos = writeService(buf, tag(buf, pos, 0x12), v as Service);
  return pos;
}

function writeWorkload(buf: Buffer, pos: number, w: Workload): number {
  pos = open(buf, pos);
  let v: unknown;
  if (has(w, 'name', (v = w.name))) pos = writeString(buf, tag(buf, pos, 0x0a), v as string);
  if (has(w, 'namespace', (v = w.namespace))) pos = writeString(buf, tag(buf, pos, 0x12), v as string);
  if ((v = w.addresses) != null) {
    const a = v as Uint8Array[];
    for (let i = 0; i < a.length; i++) pos = writeBytes(buf, tag(buf, pos, 0x1a), a[i] as Uint8Array);
  }
  if (has(w, 'network', (v = w.network))) pos = writeString(buf, tag(buf, pos, 0x22), v as string);
  if (has(w, 'tunnelProtocol', (v = w.tunnelProtocol))) pos = writeVarint(buf, tag(buf, pos, 0x28), (v as number) | 0);
  if (has(w, 'trustDomain', (v = w.trustDomain))) pos = writeString(buf, tag(buf, pos, 0x32), v as string);
  if (has(w, 'serviceAccount', (v = w.serviceAccount))) pos = writeString(buf, tag(buf, pos, 0x3a), v as string);
  if (has(w, 'waypoint', (v = w.waypoint))) pos = writeGatewayAddress(buf, tag(buf, pos, 0x42), v as GatewayAddress);
  if (has(w, 'node', (v = w.node))) pos = writeString(buf, tag(buf, pos, 0x4a), v as string);
  if (has(w, 'canonicalName', (v = w.canonicalName))) pos = writeString(buf, tag(buf, pos, 0x52), v as string);
  if (has(w, 'canonicalRevision', (v = w.canonicalRevision))) pos = writeString(buf, tag(buf, pos, 0x5a), v as string);
  if (has(w, 'workloadType', (v = w.workloadType))) pos = writeVarint(buf, tag(buf, pos, 0x60), (v as number) | 0);
  if (has(w, 'workloadName', (v = w.workloadName))) pos = writeString(buf, tag(buf, pos, 0x6a), v as string);
  if (has(w, 'nativeTunnel', (v = w.nativeTunnel))) pos = writeBool(buf, pos, 0x70, v);
  if ((v = w.authorizationPolicies) != null) {
    const a = v as string[];
    for (let i = 0; i < a.length; i++) pos = writeString(buf, tag2(buf, pos, 16, LEN), a[i] as string);
  }
  if (has(w, 'status', (v = w.status))) pos = writeVarint(buf, tag2(buf, pos, 17, VARINT), (v as number) | 0);
  if (has(w, 'clusterId', (v = w.clusterId))) pos = writeString(buf, tag2(buf, pos, 18, LEN), v as string);
  if (has(w, 'networkGateway', (v = (w as { networkGateway?: unknown }).networkGateway)))
    pos = writeGatewayAddress(buf, tag2(buf, pos, 19, LEN), v as GatewayAddress);
  if (has(w, 'uid', (v = w.uid))) pos = writeString(buf, tag2(buf, pos, 20, LEN), v as string);
  if (has(w, 'hostname', (v = w.hostname))) pos = writeString(buf, tag2(buf, pos, 21, LEN), v as string);
  if (has(w, 'services', (v = w.services))) {
    const map = v as Record<string, PortList>;
    for (const key of Object.keys(map)) {
      pos = open(buf, tag2(buf, pos, 22, LEN));
      pos = writeString(buf, tag(buf, pos, 0x0a), key);
      pos = writePortList(buf, tag(buf, pos, 0x12), map[key] as PortList);
    }
  }
  if (has(w, 'applicationTunnel', (v = w.applicationTunnel)))
    pos = writeApplicationTunnel(buf, tag2(buf, pos, 23, LEN), v as ApplicationTunnel);
  if (has(w, 'locality', (v = w.locality))) pos = writeLocality(buf, tag2(buf, pos, 24, LEN), v as Locality);
  if (has(w, 'networkMode', (v = w.networkMode))) pos = writeVarint(buf, tag2(buf, pos, 25, VARINT), (v as number) | 0);
  if (has(w, 'capacity', (v = w.capacity))) pos = writeUInt32Value(buf, tag2(buf, pos, 27, LEN), v as object);
  return pos;
}

function writeService(buf: Buffer, pos: number, o: Service): number {
  pos = open(buf, pos);
  let v: unknown;
  if (has(o, 'name', (v = o.name))) pos = writeString(buf, tag(buf, pos, 0x0a), v as string);
  if (has(o, 'namespace', (v = o.namespace))) pos = writeString(buf, tag(buf, pos, 0x12), v as string);
  if (has(o, 'hostname', (v = o.hostname))) pos = writeString(buf, tag(buf, pos, 0x1a), v as string);
  if ((v = o.addresses) != null) {
    const a = v as NetworkAddress[];
    for (let i = 0; i < a.length; i++) pos = writeNetworkAddress(buf, tag(buf, pos, 0x22), a[i] as NetworkAddress);
  }
  if ((v = o.ports) != null) {
    const a = v as Port[];
    for (let i = 0; i < a.length; i++) pos = writePort(buf, tag(buf, pos, 0x2a), a[i] as Port);
  }
  if ((v = o.subjectAltNames) != null) {
    const a = v as string[];
    for (let i = 0; i < a.length; i++) pos = writeString(buf, tag(buf, pos, 0x32), a[i] as string);
  }
  if (has(o, 'waypoint', (v = o.waypoint))) pos = writeGatewayAddress(buf, tag(buf, pos, 0x3a), v as GatewayAddress);
  if (has(o, 'loadBalancing', (v = o.loadBalancing)))
    pos = writeLoadBalancing(buf, tag(buf, pos, 0x42), v as LoadBalancing);
  if (has(o, 'ipFamilies', (v = o.ipFamilies))) pos = writeVarint(buf, tag(buf, pos, 0x48), (v as number) | 0);
  if (has(o, 'canonical', (v = o.canonical))) pos = writeBool(buf, pos, 0x58, v);
  if (has(o, 'ingressUseWaypoint', (v = o.ingressUseWaypoint))) pos = writeBool(buf, pos, 0x60, v);
  if ((v = o.weightedWaypoints) != null) {
    const a = v as WeightedWaypoint[];
    for (let i = 0; i < a.length; i++) pos = writeWeightedWaypoint(buf, tag(buf, pos, 0x6a), a[i] as WeightedWaypoint);
  }
  if (has(o, 'visibility', (v = o.visibility))) pos = writeVarint(buf, tag(buf, pos, 0x70), (v as number) | 0);
  return pos;
}

function writePortList(buf: Buffer, pos: number, m: PortList): number {
  pos = open(buf, pos);
  const ports = m.ports;
  if (ports != null) for (let i = 0; i < ports.length; i++) pos = writePort(buf, tag(buf, pos, 0x0a), ports[i] as Port);
  return pos;
}

function writePort(buf: Buffer, pos: number, p: Port): number {
  pos = open(buf, pos);
  let v: unknown;
  if (has(p, 'servicePort', (v = p.servicePort))) pos = writeVarint(buf, tag(buf, pos, 0x08), (v as number) >>> 0);
  if (has(p, 'targetPort', (v = p.targetPort))) pos = writeVarint(buf, tag(buf, pos, 0x10), (v as number) >>> 0);
  if (has(p, 'appProtocol', (v = p.appProtocol))) pos = writeVarint(buf, tag(buf, pos, 0x18), (v as number) | 0);
  return pos;
}

function writeGatewayAddress(buf: Buffer, pos: number, g: GatewayAddress): number {
  pos = open(buf, pos);
  let v: unknown;
  if (has(g, 'hostname', (v = g.hostname)))
    pos = writeNamespacedHostname(buf, tag(buf, pos, 0x0a), v as NamespacedHostname);
  if (has(g, 'address', (v = g.address))) pos = writeNetworkAddress(buf, tag(buf, pos, 0x12), v as NetworkAddress);
  if (has(g, 'hboneMtlsPort', (v = g.hboneMtlsPort))) pos = writeVarint(buf, tag(buf, pos, 0x18), (v as number) >>> 0);
  return pos;
}

function writeNamespacedHostname(buf: Buffer, pos: number, h: NamespacedHostname): number {
  pos = open(buf, pos);
  let v: unknown;
  if (has(h, 'namespace', (v = h.namespace))) pos = writeString(buf, tag(buf, pos, 0x0a), v as string);
  if (has(h, 'hostname', (v = h.hostname))) pos = writeString(buf, tag(buf, pos, 0x12), v as string);
  return pos;
}

function writeNetworkAddress(buf: Buffer, pos: number, a: NetworkAddress): number {
  pos = open(buf, pos);
  let v: unknown;
  if (has(a, 'network', (v = a.network))) pos = writeString(buf, tag(buf, pos, 0x0a), v as string);
  if (has(a, 'address', (v = a.address))) pos = writeBytes(buf, tag(buf, pos, 0x12), v as Uint8Array);
  if (has(a, 'length', (v = a.length))) pos = writeVarint(buf, tag(buf, pos, 0x18), (v as number) >>> 0);
  return pos;
}

function writeLocality(buf: Buffer, pos: number, l: Locality): number {
  pos = open(buf, pos);
  let v: unknown;
  if (has(l, 'region', (v = l.region))) pos = writeString(buf, tag(buf, pos, 0x0a), v as string);
  if (has(l, 'zone', (v = l.zone))) pos = writeString(buf, tag(buf, pos, 0x12), v as string);
  if (has(l, 'subzone', (v = l.subzone))) pos = writeString(buf, tag(buf, pos, 0x1a), v as string);
  return pos;
}

function writeApplicationTunnel(buf: Buffer, pos: number, t: ApplicationTunnel): number {
  pos = open(buf, pos);
  let v: unknown;
  if (has(t, 'protocol', (v = t.protocol))) pos = writeVarint(buf, tag(buf, pos, 0x08), (v as number) | 0);
  if (has(t, 'port', (v = t.port))) pos = writeVarint(buf, tag(buf, pos, 0x10), (v as number) >>> 0);
  return pos;
}

function writeLoadBalancing(buf: Buffer, pos: number, lb: LoadBalancing): number {
  pos = open(buf, pos);
  let v: unknown;
  if ((v = lb.routingPreference) != null) {
    const a = v as number[];
    if (a.length) {
      pos = open(buf, tag(buf, pos, 0x0a));
      for (let i = 0; i < a.length; i++) pos = writeVarint(buf, pos, (a[i] as number) | 0);
    }
  }
  if (has(lb, 'mode', (v = lb.mode))) pos = writeVarint(buf, tag(buf, pos, 0x10), (v as number) | 0);
  if (has(lb, 'healthPolicy', (v = lb.healthPolicy))) pos = writeVarint(buf, tag(buf, pos, 0x18), (v as number) | 0);
  return pos;
}

function writeWeightedWaypoint(buf: Buffer, pos: number, w: WeightedWaypoint): number {
  pos = open(buf, pos);
  let v: unknown;
  if (has(w, 'destination', (v = w.destination)))
    pos = writeGatewayAddress(buf, tag(buf, pos, 0x0a), v as GatewayAddress);
  if (has(w, 'weight', (v = w.weight))) pos = writeVarint(buf, tag(buf, pos, 0x10), (v as number) >>> 0);
  return pos;
}

function writeUInt32Value(buf: Buffer, pos: number, m: object): number {
  pos = open(buf, pos);
  const v = (m as { value?: unknown }).value;
  if (has(m, 'value', v)) pos = writeVarint(buf, tag(buf, pos, 0x08), (v as number) >>> 0);
  return pos;
}
