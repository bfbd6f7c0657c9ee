// Ports of Kubernetes Services and ServiceEntries, and how a workload's target ports are resolved
// from them (named targetPorts are per workload).

import type { KubeObject } from '../store/types';
import { Port, PortList } from './messages';
import { ContainerPort, KubeServicePort, ServiceEntryPort, podSpec, serviceEntrySpec, serviceSpec } from './specs';

export type { ContainerPort, KubeServicePort, ServiceEntryPort };

/** The number a Service port's targetPort resolves to before any pod is known (0 for a name). */
export function numericTargetPort(p: KubeServicePort): number {
  if (p.targetPort === undefined || p.targetPort === '') return p.port;
  if (typeof p.targetPort === 'number') return p.targetPort;
  return /^\d+$/.test(p.targetPort) ? Number(p.targetPort) : 0;
}

export function namedTargetPort(p: KubeServicePort): string | undefined {
  if (typeof p.targetPort !== 'string' || p.targetPort === '' || /^\d+$/.test(p.targetPort)) return undefined;
  return p.targetPort;
}

/** TCP container ports, of containers and of sidecar-style init containers (restartPolicy Always). */
export function podTcpPorts(pod: KubeObject): ContainerPort[] {
  const spec = podSpec(pod);
  const containers = [
    ...(spec.containers ?? []),
    ...(spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always'),
  ];
  const out: ContainerPort[] = [];
  for (const c of containers) for (const p of c.ports ?? []) if ((p.protocol ?? 'TCP') === 'TCP') out.push(p);
  return out;
}

/** A number in a user-written map, ignoring inherited properties such as "constructor". */
function own(map: Record<string, number>, key: string): number | undefined {
  return Object.prototype.hasOwnProperty.call(map, key) && typeof map[key] === 'number' ? map[key] : undefined;
}

function port(servicePort: number, targetPort: number): Port {
  const p: Port = {};
  if (servicePort) p.servicePort = servicePort;
  if (targetPort) p.targetPort = targetPort;
  return p;
}

/** A Kubernetes Service's ports for one pod: a named targetPort missing on the pod omits that port. */
export function kubeServicePortsForPod(service: KubeObject, podPorts: readonly ContainerPort[]): PortList {
  const ports: Port[] = [];
  for (const p of serviceSpec(service).ports ?? []) {
    const named = namedTargetPort(p);
    if (named === undefined) {
      ports.push(port(p.port, numericTargetPort(p)));
      continue;
    }
    const found = podPorts.find((c) => c.name === named);
    if (found) ports.push(port(p.port, found.containerPort));
  }
  return ports.length ? { ports } : {};
}

/** A ServiceEntry's ports for one pod: a container port named like the SE port wins, else targetPort. */
export function serviceEntryPortsForPod(se: KubeObject, podPorts: readonly ContainerPort[]): PortList {
  const ports: Port[] = [];
  for (const p of serviceEntrySpec(se).ports ?? []) {
    const found = p.name ? podPorts.find((c) => c.name === p.name) : undefined;
    ports.push(port(p.number, found ? found.containerPort : p.targetPort || p.number));
  }
  return ports.length ? { ports } : {};
}

/**
 * Ports for a WorkloadEntry (or a ServiceEntry endpoint) with its `ports` map: for a Service, a
 * named targetPort must be in the map or the port is skipped, and an entry named like a numeric
 * port overrides its number; for a ServiceEntry, an entry named like the port overrides it.
 */
export function servicePortsForEntry(
  service: KubeObject,
  isServiceEntry: boolean,
  entryPorts: Record<string, number> | undefined,
): PortList {
  const ports: Port[] = [];
  const map = entryPorts ?? {};
  if (isServiceEntry) {
    for (const p of serviceEntrySpec(service).ports ?? []) {
      const override = own(map, p.name ?? '');
      ports.push(port(p.number, override ?? (p.targetPort || p.number)));
    }
  } else {
    for (const p of serviceSpec(service).ports ?? []) {
      const named = namedTargetPort(p);
      if (named === undefined) {
        const byName = own(map, p.name ?? '');
        ports.push(port(p.port, byName ?? numericTargetPort(p)));
        continue;
      }
      const v = own(map, named);
      if (v !== undefined) ports.push(port(p.port, v));
    }
  }
  return ports.length ? { ports } : {};
}
