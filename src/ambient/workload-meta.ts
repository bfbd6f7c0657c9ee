// Per-workload facts istiod derives from labels, annotations and owner references.

import type { KubeObject } from '../store/types';
import { ANNOTATION, LABEL, REDIRECTION_ENABLED } from './constants';
import { Locality, TunnelProtocol } from './messages';

/** Jobs created by a CronJob are named `<cronjob>-<8 to 10 digits>`. */
const CRONJOB_JOB_NAME = /^(.+)-\d{8,10}$/;

/** istiod's GetDeployMetaFromPod: the name of the controller that owns the pod. */
export function podWorkloadName(pod: KubeObject): string {
  const labels = pod.metadata.labels ?? {};
  const override = labels[LABEL.workloadName];
  if (override !== undefined) return override;
  const owner = pod.metadata.ownerReferences?.find((o) => o.controller === true);
  if (!pod.metadata.generateName || !owner) return pod.metadata.name;
  switch (owner.kind) {
    case 'ReplicaSet': {
      for (const hashLabel of [LABEL.podTemplateHash, LABEL.rolloutsPodTemplateHash]) {
        const hash = labels[hashLabel];
        if (hash !== undefined && owner.name.endsWith(`-${hash}`)) return owner.name.slice(0, -(hash.length + 1));
      }
      return owner.name;
    }
    case 'ReplicationController':
      return labels[LABEL.deploymentConfig] ?? owner.name;
    case 'Job':
      return CRONJOB_JOB_NAME.exec(owner.name)?.[1] ?? owner.name;
    default:
      return owner.name;
  }
}

/** Canonical service name and revision from the first present label, as istiod's CanonicalService. */
export function canonicalService(labels: Record<string, string> | undefined, workloadName: string): { name: string; revision: string } {
  const first = (keys: readonly string[]) => {
    for (const k of keys) {
      const v = labels?.[k];
      if (v !== undefined && v !== '') return v;
    }
    return undefined;
  };
  return { name: first(LABEL.canonicalName) ?? workloadName, revision: first(LABEL.canonicalRevision) ?? 'latest' };
}

/**
 * HBONE only from the CNI's redirection annotation, or natively from the tunnel label listing
 * `http` (sidecars with HBONE); istiod never reads istio.io/dataplane-mode.
 */
export function tunnelOf(labels: Record<string, string> | undefined, annotations: Record<string, string> | undefined): { tunnelProtocol: TunnelProtocol; nativeTunnel: boolean } {
  const tunnels = (labels?.[LABEL.tunnel] ?? '').split(',').map((s) => s.trim());
  if (tunnels.includes('http')) return { tunnelProtocol: TunnelProtocol.HBONE, nativeTunnel: true };
  if (annotations?.[ANNOTATION.redirection] === REDIRECTION_ENABLED) return { tunnelProtocol: TunnelProtocol.HBONE, nativeTunnel: false };
  return { tunnelProtocol: TunnelProtocol.NONE, nativeTunnel: false };
}

export function localityOfNode(node: KubeObject | undefined): Locality | undefined {
  const labels = node?.metadata.labels;
  if (!labels) return undefined;
  const region = labels[LABEL.region] ?? '';
  const zone = labels[LABEL.zone] ?? '';
  const subzone = labels[LABEL.subzone] ?? '';
  if (!region && !zone && !subzone) return undefined;
  return compactLocality(region, zone, subzone);
}

/** WorkloadEntry / ServiceEntry endpoint locality is "region/zone/subzone". */
export function localityOfText(text: string | undefined): Locality | undefined {
  if (!text) return undefined;
  const [region = '', zone = '', subzone = ''] = text.split('/');
  if (!region && !zone && !subzone) return undefined;
  return compactLocality(region, zone, subzone);
}

function compactLocality(region: string, zone: string, subzone: string): Locality {
  const l: Locality = {};
  if (region) l.region = region;
  if (zone) l.zone = zone;
  if (subzone) l.subzone = subzone;
  return l;
}

/** Running or pending pods only; Failed and Succeeded pods are terminal. */
export function podIsTerminal(pod: KubeObject): boolean {
  const phase = pod.status?.phase;
  return phase === 'Failed' || phase === 'Succeeded';
}

export function podIsReady(pod: KubeObject): boolean {
  const conditions: { type?: string; status?: string }[] = pod.status?.conditions ?? [];
  return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

/** status.podIPs, falling back to status.podIP. */
export function podIpTexts(pod: KubeObject): string[] {
  const ips: { ip?: string }[] = pod.status?.podIPs ?? [];
  const list = ips.map((i) => i.ip ?? '').filter((s) => s !== '');
  if (list.length > 0) return list;
  return pod.status?.podIP ? [pod.status.podIP as string] : [];
}
