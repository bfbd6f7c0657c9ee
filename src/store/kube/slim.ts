// Objects are slimmed before they are stored: the control plane never reads managedFields, the
// last-applied annotation, or most of a Pod or Node, and at 100k pods those are most of the heap.
// What stays is what the ambient rules, the CA's node authorizer and the debug pages read.

import { apiVersionOf, type WatchKindId, KINDS } from '../kinds';
import type { KubeObject, ObjectMeta, OwnerReference } from '../types';

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

type Json = Record<string, unknown>;

/** Distinct strings kept for sharing; when the table is full it starts over. */
export const INTERN_TABLE_LIMIT = 100_000;
/** Longer strings are rarely repeated and are not shared. */
export const INTERN_MAX_LENGTH = 128;

const internTable = new Map<string, string>();

/**
 * Returns one shared copy of a string. JSON.parse gives every pod its own copy of "default",
 * "TCP", its node's name and its labels' values; at 100k pods those copies are most of the heap.
 */
export function intern<T>(value: T): T {
  if (typeof value !== 'string' || value.length > INTERN_MAX_LENGTH) return value;
  const found = internTable.get(value);
  if (found !== undefined) return found as T;
  if (internTable.size >= INTERN_TABLE_LIMIT) internTable.clear();
  internTable.set(value, value);
  return value;
}

export function internTableSize(): number {
  return internTable.size;
}

// Objects are built with one literal holding every field (absent ones as undefined), never with
// object spread or one property at a time: V8 gives a spread-built object several times the
// memory of an equal literal, and a grown one an extra property array (measured by the
// kube-memory bench scenario). The store holds 100k of them. Fields that are undefined are
// absent to every reader (JSON, truthiness checks, toEqual).

function internValues(map: Record<string, string>, skip?: string): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const [k, v] of Object.entries(map)) {
    if (k === skip) continue;
    (out ??= {})[k] = intern(v);
  }
  return out;
}

function slimOwnerReference(o: OwnerReference): OwnerReference {
  return {
    apiVersion: intern(o.apiVersion),
    kind: intern(o.kind),
    name: intern(o.name),
    uid: intern(o.uid),
    controller: o.controller,
  };
}

export function slimMetadata(m: ObjectMeta): ObjectMeta {
  return {
    name: m.name,
    namespace: m.namespace === undefined ? undefined : intern(m.namespace),
    uid: m.uid,
    resourceVersion: m.resourceVersion,
    generation: m.generation,
    creationTimestamp: m.creationTimestamp === undefined ? undefined : intern(m.creationTimestamp),
    deletionTimestamp: m.deletionTimestamp,
    generateName: m.generateName === undefined ? undefined : intern(m.generateName),
    labels: m.labels && internValues(m.labels),
    annotations: m.annotations && internValues(m.annotations, LAST_APPLIED_ANNOTATION),
    ownerReferences:
      m.ownerReferences && m.ownerReferences.length > 0 ? m.ownerReferences.map(slimOwnerReference) : undefined,
  };
}

interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
}
interface Container {
  name: string;
  ports?: ContainerPort[];
  restartPolicy?: string;
}

function slimPort(p: ContainerPort): ContainerPort {
  if (p.name === undefined) return { containerPort: p.containerPort, protocol: intern(p.protocol ?? 'TCP') };
  return { name: intern(p.name), containerPort: p.containerPort, protocol: intern(p.protocol ?? 'TCP') };
}

function slimContainer(c: Container): Container {
  return {
    name: intern(c.name),
    ports: c.ports && c.ports.length > 0 ? c.ports.map(slimPort) : undefined,
    restartPolicy: c.restartPolicy,
  };
}

function slimPodSpec(spec: Json): Json {
  // Only native sidecars (restartPolicy Always) can serve a Service's named targetPort.
  const sidecars = ((spec['initContainers'] as Container[] | undefined) ?? []).filter(
    (c) => c.restartPolicy === 'Always',
  );
  return {
    nodeName: intern(spec['nodeName']),
    serviceAccountName: intern(spec['serviceAccountName']),
    hostNetwork: spec['hostNetwork'],
    containers: ((spec['containers'] as Container[] | undefined) ?? []).map(slimContainer),
    initContainers: sidecars.length > 0 ? sidecars.map(slimContainer) : undefined,
  };
}

function slimPodStatus(status: Json): Json {
  const podIP = status['podIP'] as string | undefined;
  const podIPs = status['podIPs'] as { ip: string }[] | undefined;
  const ready = ((status['conditions'] as { type: string; status: string }[] | undefined) ?? []).filter(
    (c) => c.type === 'Ready',
  );
  // A pod's own IP is unique (and shared between podIP and podIPs); its phase and its node's IP
  // are shared with many pods.
  return {
    phase: intern(status['phase']),
    podIP,
    hostIP: intern(status['hostIP']),
    podIPs: podIPs && podIPs.length > 0 ? podIPs.map((p) => ({ ip: p.ip === podIP ? podIP : p.ip })) : undefined,
    conditions: ready.length > 0 ? ready.map((c) => ({ type: intern(c.type), status: intern(c.status) })) : undefined,
  };
}

/** Returns the stored form of an object of a kind: typed (apiVersion/kind set) and slimmed. */
export function slimObject(kind: WatchKindId, o: KubeObject): KubeObject {
  const info = KINDS[kind];
  const apiVersion = apiVersionOf(info);
  const metadata = slimMetadata(o.metadata);
  if (kind === 'Pod') {
    return {
      apiVersion,
      kind: info.kind,
      metadata,
      spec: slimPodSpec((o.spec ?? {}) as Json),
      status: slimPodStatus((o.status ?? {}) as Json),
    };
  }
  const out: KubeObject = { apiVersion, kind: info.kind, metadata };
  if (kind === 'Node') {
    // A Node's status carries its image list and conditions; only its addresses are of use.
    const spec: unknown = o.spec;
    if (spec !== undefined) out.spec = spec;
    const addresses = (o.status as Json | undefined)?.['addresses'];
    out.status = addresses !== undefined ? { addresses } : {};
    return out;
  }
  for (const key of Object.keys(o)) {
    if (key !== 'apiVersion' && key !== 'kind' && key !== 'metadata') out[key] = o[key];
  }
  return out;
}
