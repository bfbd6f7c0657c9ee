// The identity a client claims in its first request: node id "type~ip~pod.ns~ns.svc.<domain>"
// and string metadata (ztunnel sends NAME, NAMESPACE, INSTANCE_IPS, NODE_NAME, CLUSTER_ID, ...).

import { clientText } from '../wire/client-limits';
import type { NodeMessage, ProtoStruct, ProtoValue } from '../wire/messages';

/** Proxy types istiod accepts in the first part of a node id. */
export const NODE_TYPES = ['ztunnel', 'sidecar', 'router', 'waypoint'] as const;

export interface ProxyNode {
  id: string;
  type: (typeof NODE_TYPES)[number];
  /** "<pod>.<ns>" for ztunnel. */
  proxyId: string;
  /** NAMESPACE metadata, else the namespace part of the proxy id. */
  namespace: string;
  /** NODE_NAME metadata: the Kubernetes node whose workloads this client serves. */
  nodeName: string;
  clusterId: string;
  ips: string[];
  /** Every metadata value, non-strings as JSON. */
  metadata: Record<string, string>;
}

export class NodeError extends Error {
  override name = 'NodeError';
}

// Recursive, but over metadata the decoder has bounded to MAX_METADATA_DEPTH levels (client-limits.ts).
function valueToJson(v: ProtoValue | undefined): unknown {
  if (!v) return null;
  switch (v.kind) {
    case 'stringValue':
      return v.stringValue ?? '';
    case 'numberValue':
      return v.numberValue ?? 0;
    case 'boolValue':
      return v.boolValue ?? false;
    case 'structValue':
      return structToJson(v.structValue);
    case 'listValue':
      return (v.listValue?.values ?? []).map(valueToJson);
    default:
      return null;
  }
}

export function structToJson(s: ProtoStruct | null | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s?.fields ?? {})) out[k] = valueToJson(v);
  return out;
}

/** Reads the node of a first request; throws NodeError naming the problem. */
export function parseNode(node: NodeMessage | null): ProxyNode {
  if (!node || !node.id) throw new NodeError('missing node id in the first request');
  const parts = node.id.split('~');
  if (parts.length !== 4) {
    throw new NodeError(
      `node id "${clientText(node.id)}" must have 4 parts "type~ip~pod.namespace~namespace.svc.<domain>"`,
    );
  }
  const [type, ip, proxyId] = parts as [string, string, string, string];
  if (!(NODE_TYPES as readonly string[]).includes(type)) {
    throw new NodeError(
      `node id "${clientText(node.id)}" has unknown proxy type "${clientText(type)}" (one of ${NODE_TYPES.join(', ')})`,
    );
  }
  const json = structToJson(node.metadata);
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(json)) metadata[k] = typeof v === 'string' ? v : JSON.stringify(v);
  const dot = proxyId.indexOf('.');
  const idNamespace = dot >= 0 ? proxyId.slice(dot + 1) : '';
  const instanceIps = (metadata['INSTANCE_IPS'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return {
    id: node.id,
    type: type as ProxyNode['type'],
    proxyId,
    namespace: metadata['NAMESPACE'] || idNamespace,
    nodeName: metadata['NODE_NAME'] ?? '',
    clusterId: metadata['CLUSTER_ID'] ?? '',
    ips: instanceIps.length > 0 ? instanceIps : ip ? [ip] : [],
    metadata,
  };
}
