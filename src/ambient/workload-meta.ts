// Per-workload facts istiod derives from labels, annotations and owner references.

import type { DecisionTrace } from '../contract/decision';
import type { KubeObject } from '../store/types';
import { ANNOTATION, LABEL, REDIRECTION_ENABLED } from './constants';
import { Locality, TunnelProtocol } from './messages';
import { ownValue, podStatus } from './specs';

/** Jobs created by a CronJob are named `<cronjob>-<8 to 10 digits>`. */
const CRONJOB_JOB_NAME = /(.+)-\d{8,10}$/;

/** istiod's GetWorkloadMetaFromPod: the name of the controller that owns the pod. */
export function podWorkloadName(pod: KubeObject): string {
  const labels = pod.metadata.labels ?? {};
  const named = ownValue(labels, LABEL.workloadName);
  if (named !== undefined) return named;
  const owner = pod.metadata.ownerReferences?.find((o) => o.controller === true);
  if (!pod.metadata.generateName || !owner) return pod.metadata.name;
  let name = owner.name;
  const hash = labels[LABEL.podTemplateHash] ?? '';
  const rolloutHash = labels[LABEL.rolloutsPodTemplateHash] ?? '';
  const deploymentConfig = labels[LABEL.deploymentConfig] ?? '';
  // Suffix checks without the dash, trimming with it, exactly as istiod's heuristics.
  const trim = (h: string) => (owner.name.endsWith(`-${h}`) ? owner.name.slice(0, -(h.length + 1)) : owner.name);
  if (owner.kind === 'ReplicaSet' && hash !== '' && owner.name.endsWith(hash)) name = trim(hash);
  else if (owner.kind === 'ReplicaSet' && rolloutHash !== '' && owner.name.endsWith(rolloutHash))
    name = trim(rolloutHash);
  else if (owner.kind === 'ReplicationController' && deploymentConfig !== '') name = deploymentConfig;
  else if (owner.kind === 'Job') name = CRONJOB_JOB_NAME.exec(owner.name)?.[1] ?? owner.name;
  return name === '' ? pod.metadata.name : name;
}

/** Canonical service name and revision from the first present label, as istiod's CanonicalService. */
export function canonicalService(
  labels: Record<string, string> | undefined,
  workloadName: string,
): { name: string; revision: string } {
  // A label that is present counts, even when empty (istiod's lookupLabelValue).
  const first = (keys: readonly string[]) => {
    for (const k of keys) {
      const v = ownValue(labels, k);
      if (v !== undefined) return v;
    }
    return undefined;
  };
  return { name: first(LABEL.canonicalName) ?? workloadName, revision: first(LABEL.canonicalRevision) ?? 'latest' };
}

/**
 * HBONE only from the CNI's redirection annotation, or natively from the tunnel label listing
 * `http` (sidecars with HBONE); istiod never reads istio.io/dataplane-mode. A trace (explain only)
 * gets the two values read and the rule that decided.
 */
export function tunnelOf(
  labels: Record<string, string> | undefined,
  annotations: Record<string, string> | undefined,
  trace?: DecisionTrace,
): { tunnelProtocol: TunnelProtocol; nativeTunnel: boolean } {
  const tunnel = labels?.[LABEL.tunnel];
  if (tunnel !== undefined && tunnel.split(',').includes('http')) {
    if (trace) explainTunnel(trace, labels, annotations, 'native');
    return { tunnelProtocol: TunnelProtocol.HBONE, nativeTunnel: true };
  }
  if (annotations?.[ANNOTATION.redirection] === REDIRECTION_ENABLED) {
    if (trace) explainTunnel(trace, labels, annotations, 'redirected');
    return { tunnelProtocol: TunnelProtocol.HBONE, nativeTunnel: false };
  }
  if (trace) explainTunnel(trace, labels, annotations, 'none');
  return { tunnelProtocol: TunnelProtocol.NONE, nativeTunnel: false };
}

/**
 * Explain only, in a function of its own so tunnelOf stays small on the index's hot path: the
 * values read, in the order tunnelOf reads them, and the rule that decided.
 */
function explainTunnel(
  trace: DecisionTrace,
  labels: Record<string, string> | undefined,
  annotations: Record<string, string> | undefined,
  decided: 'native' | 'redirected' | 'none',
): void {
  trace.fact(`label ${LABEL.tunnel}`, labels?.[LABEL.tunnel] ?? null);
  if (decided === 'native') {
    trace.decide(
      'protocol',
      'protocol.tunnel-label',
      'a tunnel label listing http: the workload speaks HBONE itself',
      'HBONE (native tunnel)',
    );
    return;
  }
  trace.fact(`annotation ${ANNOTATION.redirection}`, annotations?.[ANNOTATION.redirection] ?? null);
  if (decided === 'redirected')
    trace.decide(
      'protocol',
      'protocol.redirection',
      `the node agent redirects the pod's traffic (${ANNOTATION.redirection}=${REDIRECTION_ENABLED}): ztunnel tunnels it in HBONE`,
      'HBONE',
    );
  else
    trace.decide(
      'protocol',
      'protocol.none',
      `no tunnel label with http and no ${ANNOTATION.redirection}=${REDIRECTION_ENABLED}: plain TCP to the workload`,
      'NONE (TCP)',
    );
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
  const phase = podStatus(pod).phase;
  return phase === 'Failed' || phase === 'Succeeded';
}

export function podIsReady(pod: KubeObject): boolean {
  const conditions = podStatus(pod).conditions ?? [];
  return conditions.find((c) => c.type === 'Ready')?.status === 'True';
}

/** status.podIPs, falling back to status.podIP. */
export function podIpTexts(pod: KubeObject): string[] {
  const { podIPs, podIP } = podStatus(pod);
  const list = (podIPs ?? []).map((i) => i.ip ?? '').filter((s) => s !== '');
  if (list.length > 0) return list;
  return podIP ? [podIP] : [];
}
