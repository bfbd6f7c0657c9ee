// The State-of-the-World messages as istiod-ts reads and writes them. Only istioctl's debug
// queries come this way, so a request is small: it is measured before it is decoded, its strings
// are bounded like the Delta request's (client-limits.ts), and the node is read only for its id
// (authorization uses the caller's authenticated identity, never what the node claims).
// Responses are encoded with protobufjs from proto/xds.proto and proto/csds.proto.

import * as path from 'node:path';
import * as protobuf from 'protobufjs';
import { protoDir } from '../../proto-files';
import {
  MAX_NONCE_BYTES,
  MAX_RESOURCE_NAME_BYTES,
  MAX_TYPE_URL_BYTES,
  checkNodeBytes,
  clientText,
  overLimit,
} from './client-limits';
import { Reader, WIRE_LEN } from './proto-reader';

/**
 * A whole DiscoveryRequest. istioctl's is under 1 KiB (a node with five metadata strings and one
 * type URL); the bound leaves room for any node the Delta method accepts (MAX_NODE_BYTES) and is
 * checked before a byte is decoded.
 */
export const MAX_SOTW_REQUEST_BYTES = 1024 * 1024 + 64 * 1024;
/** resource_names in one request: the debug types take none or exactly one (istiod refuses more). */
export const MAX_SOTW_RESOURCE_NAMES = 16;

/** envoy.service.discovery.v3.DiscoveryRequest, as far as the debug types need it. */
export interface SotwRequest {
  /** node.id of the first request (for logs only); '' when absent. */
  nodeId: string;
  type_url: string;
  resource_names: string[];
  response_nonce: string;
  /** error_detail.message when the client rejected a response (a NACK), else undefined. */
  nack: string | undefined;
  /** Set when the request is over a limit or malformed: what is wrong, never the value. */
  invalid?: string;
}

// DiscoveryRequest field numbers (proto/xds.proto).
const REQ_NODE = 2;
const REQ_RESOURCE_NAMES = 3;
const REQ_TYPE_URL = 4;
const REQ_NONCE = 5;
const REQ_ERROR_DETAIL = 6;
const NODE_ID = 1;
const STATUS_MESSAGE = 2;

function nodeId(buf: Buffer, start: number, end: number): string {
  const r = new Reader(buf, start, end);
  let id = '';
  while (r.pos < end) {
    const tag = r.varint();
    if (tag >>> 3 === NODE_ID && (tag & 7) === WIRE_LEN) id = r.string();
    else r.skip(tag & 7);
  }
  return id;
}

function statusMessage(buf: Buffer, start: number, end: number): string {
  const r = new Reader(buf, start, end);
  let message = '';
  while (r.pos < end) {
    const tag = r.varint();
    if (tag >>> 3 === STATUS_MESSAGE && (tag & 7) === WIRE_LEN) {
      const [s, e] = r.len();
      message = clientText(buf.toString('utf8', s, e));
    } else r.skip(tag & 7);
  }
  return message;
}

/** Decodes a DiscoveryRequest; a request over a limit or malformed comes back with `invalid` set. */
export function decodeSotwRequest(buf: Buffer): SotwRequest {
  const req: SotwRequest = { nodeId: '', type_url: '', resource_names: [], response_nonce: '', nack: undefined };
  const refuse = (message: string): SotwRequest => {
    req.invalid = message;
    return req;
  };
  if (buf.length > MAX_SOTW_REQUEST_BYTES)
    return refuse(overLimit('the request', buf.length, MAX_SOTW_REQUEST_BYTES, 'MAX_SOTW_REQUEST_BYTES'));
  const bounded = (field: string, s: number, e: number, limit: number, name: string): string | undefined => {
    if (e - s > limit) {
      refuse(overLimit(field, e - s, limit, name));
      return undefined;
    }
    return buf.toString('utf8', s, e);
  };
  try {
    const r = new Reader(buf);
    while (r.pos < r.end) {
      const tag = r.varint();
      const field = tag >>> 3;
      if ((tag & 7) !== WIRE_LEN || field < REQ_NODE || field > REQ_ERROR_DETAIL) {
        r.skip(tag & 7);
        continue;
      }
      const [s, e] = r.len();
      if (field === REQ_NODE) {
        const problem = checkNodeBytes(buf, s, e);
        if (problem) return refuse(problem);
        req.nodeId = nodeId(buf, s, e);
      } else if (field === REQ_RESOURCE_NAMES) {
        if (req.resource_names.length >= MAX_SOTW_RESOURCE_NAMES)
          return refuse(
            overLimit(
              'resource_names',
              MAX_SOTW_RESOURCE_NAMES + 1,
              MAX_SOTW_RESOURCE_NAMES,
              'MAX_SOTW_RESOURCE_NAMES',
              'names or more',
            ),
          );
        const name = bounded('a name in resource_names', s, e, MAX_RESOURCE_NAME_BYTES, 'MAX_RESOURCE_NAME_BYTES');
        if (name === undefined) return req;
        req.resource_names.push(name);
      } else if (field === REQ_TYPE_URL) {
        const type = bounded('type_url', s, e, MAX_TYPE_URL_BYTES, 'MAX_TYPE_URL_BYTES');
        if (type === undefined) return req;
        req.type_url = type;
      } else if (field === REQ_NONCE) {
        const nonce = bounded('response_nonce', s, e, MAX_NONCE_BYTES, 'MAX_NONCE_BYTES');
        if (nonce === undefined) return req;
        req.response_nonce = nonce;
      } else if (field === REQ_ERROR_DETAIL) {
        req.nack = statusMessage(buf, s, e);
      }
    }
  } catch (err) {
    return refuse(`malformed DiscoveryRequest: ${(err as Error).message}`);
  }
  return req;
}

interface Types {
  response: protobuf.Type;
  clientConfig: protobuf.Type;
}

let types: Types | undefined;

function loadTypes(): Types {
  if (!types) {
    const root = new protobuf.Root();
    // csds.proto imports xds.proto and admin.proto from the same folder.
    root.loadSync(path.join(protoDir(), 'csds.proto'), { keepCase: true });
    types = {
      response: root.lookupType('envoy.service.discovery.v3.DiscoveryResponse'),
      clientConfig: root.lookupType('envoy.service.status.v3.ClientConfig'),
    };
  }
  return types;
}

export const CLIENT_CONFIG_TYPE_URL = 'type.googleapis.com/envoy.service.status.v3.ClientConfig';

export interface Timestamp {
  seconds: number;
  nanos: number;
}

export function timestamp(d: Date): Timestamp {
  const ms = d.getTime();
  return { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 };
}

/** envoy.service.status.v3.ClientConfig, field names as in proto/csds.proto. */
export interface ClientConfigMessage {
  node: { id: string; metadata: { fields: Record<string, { stringValue: string }> } };
  generic_xds_configs: {
    type_url: string;
    config_status: 'SYNCED' | 'NOT_SENT' | 'STALE' | 'ERROR';
    last_updated?: Timestamp;
    error_state?: { last_update_attempt: Timestamp; details: string };
  }[];
}

export function encodeClientConfig(c: ClientConfigMessage): Uint8Array {
  const t = loadTypes().clientConfig;
  return t.encode(t.fromObject(c)).finish();
}

export interface SotwResponse {
  version_info: string;
  type_url: string;
  nonce: string;
  /** Any messages: type URL and encoded bytes. */
  resources: { type_url: string; value: Uint8Array }[];
  /** envoy.config.core.v3.ControlPlane.identifier. */
  controlPlane: string;
}

export function encodeSotwResponse(r: SotwResponse): Buffer {
  const t = loadTypes().response;
  const msg = t.fromObject({
    version_info: r.version_info,
    type_url: r.type_url,
    nonce: r.nonce,
    resources: r.resources,
    control_plane: { identifier: r.controlPlane },
  });
  return Buffer.from(t.encode(msg).finish());
}
