// What an xDS client holds, decoded for people: workloads, services and policies as rows, a
// table or JSON. Used by `istiod-ts xds-client`; pure, so it is tested without a socket.

import { addressToJson, authorizationToJson } from '../ambient/codec';
import { ADDRESS_TYPE_URL, AUTHORIZATION_TYPE_URL } from '../contract/xds-resources';
import type { DeltaResource, DeltaResponse, HeldResources } from './ads-client';

export interface DecodedResource {
  kind: 'workload' | 'service' | 'policy' | 'unknown';
  name: string;
  version: string;
  /** The message as protobuf JSON, or an error when the bytes do not decode. */
  value: Record<string, unknown>;
}

export function decodeResource(typeUrl: string, r: DeltaResource): DecodedResource {
  const bytes = r.resource?.value ?? Buffer.alloc(0);
  const base = { name: r.name, version: r.version };
  try {
    if (typeUrl === ADDRESS_TYPE_URL) {
      const json = addressToJson(bytes);
      if (json['workload']) return { ...base, kind: 'workload', value: json['workload'] as Record<string, unknown> };
      if (json['service']) return { ...base, kind: 'service', value: json['service'] as Record<string, unknown> };
      return { ...base, kind: 'unknown', value: { error: 'Address with neither workload nor service' } };
    }
    if (typeUrl === AUTHORIZATION_TYPE_URL) return { ...base, kind: 'policy', value: authorizationToJson(bytes) };
  } catch (err) {
    return {
      ...base,
      kind: 'unknown',
      value: { error: `cannot decode ${bytes.length} bytes: ${(err as Error).message}` },
    };
  }
  return { ...base, kind: 'unknown', value: { typeUrl, bytes: bytes.length } };
}

export interface MeshView {
  workloads: DecodedResource[];
  services: DecodedResource[];
  policies: DecodedResource[];
  other: DecodedResource[];
}

export function meshView(held: HeldResources): MeshView {
  const view: MeshView = { workloads: [], services: [], policies: [], other: [] };
  for (const [typeUrl, byName] of held.byType) {
    for (const r of byName.values()) {
      const d = decodeResource(typeUrl, r);
      if (d.kind === 'workload') view.workloads.push(d);
      else if (d.kind === 'service') view.services.push(d);
      else if (d.kind === 'policy') view.policies.push(d);
      else view.other.push(d);
    }
  }
  for (const list of Object.values(view)) (list as DecodedResource[]).sort((a, b) => a.name.localeCompare(b.name));
  return view;
}

const str = (v: unknown): string =>
  v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v);

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

function workloadRow(d: DecodedResource): string[] {
  const w = d.value;
  return [
    d.name,
    str(w['namespace']),
    str(w['name']),
    ((w['addresses'] as string[] | undefined) ?? []).join(','),
    str(w['node']),
    str(w['tunnelProtocol'] ?? 'NONE'),
    str(w['status'] ?? 'HEALTHY'),
  ];
}

type PortEntry = { servicePort?: number; targetPort?: number };

/** Per Service key (namespace/hostname), per service port: the target ports the held workloads map it to. */
export type WorkloadTargets = Map<string, Map<number, Set<number>>>;

/**
 * A Service port with a named targetPort reaches ztunnel as target_port 0: the name itself is not
 * in the Service message, because one name can be a different number on each pod. ztunnel resolves
 * it per endpoint from the Workload's `services[namespace/hostname].ports` (a pod without that
 * named port carries no entry and gets no traffic on it). So the view resolves it the same way,
 * from the workloads it holds: one number when they agree, all of them (a|b) when pods differ,
 * and "named" when no held workload maps it (e.g. an on-demand view without the endpoints).
 */
export function workloadTargets(workloads: DecodedResource[]): WorkloadTargets {
  const out: WorkloadTargets = new Map();
  for (const w of workloads) {
    const services = w.value['services'] as Record<string, { ports?: PortEntry[] }> | undefined;
    for (const [key, list] of Object.entries(services ?? {})) {
      let byPort = out.get(key);
      if (!byPort) out.set(key, (byPort = new Map<number, Set<number>>()));
      for (const p of list.ports ?? []) {
        if (!p.targetPort) continue;
        const port = p.servicePort ?? 0;
        let set = byPort.get(port);
        if (!set) byPort.set(port, (set = new Set()));
        set.add(p.targetPort);
      }
    }
  }
  return out;
}

export function renderPort(serviceKey: string, p: PortEntry, targets: WorkloadTargets): string {
  const servicePort = p.servicePort ?? 0;
  if (p.targetPort) return `${servicePort}->${p.targetPort}`;
  const resolved = [...(targets.get(serviceKey)?.get(servicePort) ?? [])].sort((a, b) => a - b);
  return `${servicePort}->${resolved.length > 0 ? resolved.join('|') : 'named'}`;
}

function serviceRow(d: DecodedResource, targets: WorkloadTargets): string[] {
  const s = d.value;
  const vips = ((s['addresses'] as { network?: string; address?: string }[] | undefined) ?? []).map(
    (a) => `${a.network ?? ''}/${a.address ?? ''}`,
  );
  const key = `${str(s['namespace'])}/${str(s['hostname'])}`;
  const ports = ((s['ports'] as PortEntry[] | undefined) ?? []).map((p) => renderPort(key, p, targets));
  return [d.name, vips.join(','), ports.join(','), str(s['waypoint'])];
}

function policyRow(d: DecodedResource): string[] {
  const p = d.value;
  return [
    d.name,
    str(p['scope'] ?? 'GLOBAL'),
    str(p['action'] ?? 'ALLOW'),
    String(((p['rules'] as unknown[] | undefined) ?? []).length),
  ];
}

export function renderTable(view: MeshView): string {
  const targets = workloadTargets(view.workloads);
  const parts = [
    `WORKLOADS (${view.workloads.length})`,
    table(['UID', 'NAMESPACE', 'NAME', 'ADDRESSES', 'NODE', 'PROTOCOL', 'STATUS'], view.workloads.map(workloadRow)),
    '',
    `SERVICES (${view.services.length})`,
    table(
      ['NAME', 'VIPS', 'PORTS', 'WAYPOINT'],
      view.services.map((d) => serviceRow(d, targets)),
    ),
    '',
    `POLICIES (${view.policies.length})`,
    table(['NAME', 'SCOPE', 'ACTION', 'RULES'], view.policies.map(policyRow)),
  ];
  if (view.other.length > 0)
    parts.push(
      '',
      `OTHER (${view.other.length})`,
      table(
        ['NAME', 'DETAIL'],
        view.other.map((d) => [d.name, str(d.value)]),
      ),
    );
  return parts.join('\n') + '\n';
}

export function deltaJson(r: DeltaResponse): Record<string, unknown> {
  return {
    typeUrl: r.type_url,
    nonce: r.nonce,
    resources: r.resources.map((res) => decodeResource(r.type_url, res)),
    removed: r.removed_resources,
  };
}
