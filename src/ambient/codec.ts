// Encoding of the derived messages with protobufjs, from the project's own .proto files. Each
// resource is encoded once per version and its bytes shared by every stream.

import { hash } from 'node:crypto';
import * as path from 'node:path';
import * as protobuf from 'protobufjs';
import { protoDir } from '../proto-files';
import { VERSION_HEX_LENGTH } from './constants';
import { encodeAddressFast } from './address-encoder';
import { ipToText } from './ip';
import type { Address, Authorization } from './messages';

interface Types {
  address: protobuf.Type;
  authorization: protobuf.Type;
}

let types: Types | undefined;

function load(): Types {
  if (types) return types;
  const dir = protoDir();
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    if (target.startsWith('google/protobuf/')) return target;
    return path.isAbsolute(target) ? target : path.join(dir, target);
  };
  root.loadSync([path.join(dir, 'workload.proto'), path.join(dir, 'authorization.proto')]);
  root.resolveAll();
  types = {
    address: root.lookupType('istio.workload.Address'),
    authorization: root.lookupType('istio.security.Authorization'),
  };
  return types;
}

/**
 * The hand-written encoder (address-encoder.ts) writes protobufjs' bytes in one allocation; a
 * message it does not fully know (an unknown key, an unexpected value type) goes to protobufjs.
 */
export function encodeAddress(address: Address): Uint8Array {
  return encodeAddressFast(address) ?? encodeAddressWithProtobufjs(address);
}

/** protobufjs' own encoding: the fallback, and the reference the hand-written encoder is tested against. */
export function encodeAddressWithProtobufjs(address: Address): Uint8Array {
  return load().address.encode(address).finish();
}

export function encodeAuthorization(authorization: Authorization): Uint8Array {
  return load().authorization.encode(authorization).finish();
}

/** Decodes to a plain object (no prototype defaults), as the builders produce them. */
export function decodeAddress(bytes: Uint8Array): Address {
  const t = load().address;
  return t.toObject(t.decode(bytes), { longs: Number });
}

export function decodeAuthorization(bytes: Uint8Array): Authorization {
  const t = load().authorization;
  return t.toObject(t.decode(bytes), { longs: Number }) as Authorization;
}

/**
 * A version is a hash of the bytes: equal bytes, equal version. The one-shot crypto.hash makes no
 * Hash object, which for a buffer this small costs more than the hashing.
 */
export function versionOf(bytes: Uint8Array): string {
  return hash('sha256', bytes, 'hex').slice(0, VERSION_HEX_LENGTH);
}

const JSON_OPTIONS: protobuf.IConversionOptions = {
  enums: String,
  longs: Number,
  bytes: String,
  defaults: false,
  oneofs: false,
};

/** Protobuf JSON mapping of an Address, with IP bytes shown as text (for operators). */
export function addressToJson(bytes: Uint8Array): Record<string, unknown> {
  const t = load().address;
  const json = ipsAsText(t.toObject(t.decode(bytes), { ...JSON_OPTIONS, bytes: Array })) as Record<string, unknown>;
  // Wrapper types map to their bare value in the protobuf JSON mapping.
  const workload = json.workload as { capacity?: { value?: number } | number } | undefined;
  if (workload && typeof workload.capacity === 'object') workload.capacity = workload.capacity.value ?? 0;
  return json;
}

export function authorizationToJson(bytes: Uint8Array): Record<string, unknown> {
  const t = load().authorization;
  const json = t.toObject(t.decode(bytes), { ...JSON_OPTIONS, bytes: Array }) as Record<string, unknown>;
  return ipsAsText(json) as Record<string, unknown>;
}

const IP_FIELDS = new Set(['address', 'addresses']);

/** Byte arrays under "address"/"addresses" become IP text; everything else is left as decoded. */
function ipsAsText(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) {
    if (IP_FIELDS.has(key) && value.every((v) => typeof v === 'number')) return ipToText(Uint8Array.from(value));
    return value.map((v) => ipsAsText(v, key === 'addresses' ? 'address' : ''));
  }
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = ipsAsText(v, k);
    return out;
  }
  return value;
}
