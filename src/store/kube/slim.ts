// Objects are slimmed before they are stored: the control plane never reads managedFields, the
// last-applied annotation, or most of a Pod or Node, and at 100k pods those are most of the heap.
// What stays is what the ambient rules, the CA's node authorizer and the debug pages read.

import { apiVersionOf, type KindId, KINDS } from '../kinds';
import type { KubeObject, ObjectMeta, OwnerReference } from '../types';

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

type Json = Record<string, unknown>;

function slimOwnerReference(o: OwnerReference): OwnerReference {
  return { apiVersion: o.apiVersion, kind: o.kind, name: o.name, uid: o.uid, ...(o.controller !== undefined ? { controller: o.controller } : {}) };
}

export function slimMetadata(m: ObjectMeta): ObjectMeta {
  const out: ObjectMeta = { name: m.name };
  if (m.namespace !== undefined) out.namespace = m.namespace;
  if (m.uid !== undefined) out.uid = m.uid;
  if (m.resourceVersion !== undefined) out.resourceVersion = m.resourceVersion;
  if (m.generation !== undefined) out.generation = m.generation;
  if (m.creationTimestamp !== undefined) out.creationTimestamp = m.creationTimestamp;
  if (m.deletionTimestamp !== undefined) out.deletionTimestamp = m.deletionTimestamp;
  if (m.generateName !== undefined) out.generateName = m.generateName;
  if (m.labels && Object.keys(m.labels).length > 0) out.labels = m.labels;
  if (m.annotations) {
    const { [LAST_APPLIED_ANNOTATION]: _dropped, ...rest } = m.annotations;
    if (Object.keys(rest).length > 0) out.annotations = rest;
  }
  if (m.ownerReferences && m.ownerReferences.length > 0) out.ownerReferences = m.ownerReferences.map(slimOwnerReference);
  return out;
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

function slimContainer(c: Container): Container {
  const out: Container = { name: c.name };
  if (c.ports && c.ports.length > 0) {
    out.ports = c.ports.map((p) => ({ ...(p.name !== undefined ? { name: p.name } : {}), containerPort: p.containerPort, protocol: p.protocol ?? 'TCP' }));
  }
  if (c.restartPolicy !== undefined) out.restartPolicy = c.restartPolicy;
  return out;
}

function slimPod(o: KubeObject): Json {
  const spec = (o.spec ?? {}) as Json;
  const status = (o.status ?? {}) as Json;
  const outSpec: Json = {};
  for (const f of ['nodeName', 'serviceAccountName', 'hostNetwork'] as const) if (spec[f] !== undefined) outSpec[f] = spec[f];
  outSpec['containers'] = ((spec['containers'] as Container[] | undefined) ?? []).map(slimContainer);
  // Only native sidecars (restartPolicy Always) can serve a Service's named targetPort.
  const sidecars = ((spec['initContainers'] as Container[] | undefined) ?? []).filter((c) => c.restartPolicy === 'Always');
  if (sidecars.length > 0) outSpec['initContainers'] = sidecars.map(slimContainer);
  const outStatus: Json = {};
  for (const f of ['phase', 'podIP', 'hostIP'] as const) if (status[f] !== undefined) outStatus[f] = status[f];
  const podIPs = status['podIPs'] as { ip: string }[] | undefined;
  if (podIPs && podIPs.length > 0) outStatus['podIPs'] = podIPs.map((p) => ({ ip: p.ip }));
  const ready = ((status['conditions'] as { type: string; status: string }[] | undefined) ?? []).filter((c) => c.type === 'Ready');
  if (ready.length > 0) outStatus['conditions'] = ready.map((c) => ({ type: c.type, status: c.status }));
  return { spec: outSpec, status: outStatus };
}

function slimNode(o: KubeObject): Json {
  const status = (o.status ?? {}) as Json;
  // A Node's status carries its image list and conditions; only its addresses are of use.
  return { ...(o.spec !== undefined ? { spec: o.spec } : {}), status: status['addresses'] !== undefined ? { addresses: status['addresses'] } : {} };
}

/** Returns the stored form of an object of a kind: typed (apiVersion/kind set) and slimmed. */
export function slimObject(kind: KindId, o: KubeObject): KubeObject {
  const info = KINDS[kind];
  const head = { apiVersion: apiVersionOf(info), kind: info.kind, metadata: slimMetadata(o.metadata) };
  if (kind === 'Pod') return { ...head, ...slimPod(o) };
  if (kind === 'Node') return { ...head, ...slimNode(o) };
  const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = o;
  return { ...head, ...rest };
}
