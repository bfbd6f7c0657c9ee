// istio.io/debug/syncz over State-of-the-World ADS: one envoy.service.status.v3.ClientConfig per
// connected ztunnel, as istiod answers `istioctl proxy-status` and `istioctl version`. Each
// response also names this control plane (envoy.config.core.v3.ControlPlane.identifier) in the
// JSON istioctl parses.

import type { DeltaStream } from '../protocol/delta-stream';
import type { ClientConfigMessage } from '../wire/sotw-wire';
import { timestamp } from '../wire/sotw-wire';
import { currentError, syncStatus } from '../protocol/sync-status';

/**
 * ClientConfigs in one syncz response: one per connected ztunnel, that is one per node. Kubernetes
 * supports 5,000 nodes per cluster; twice that stays one response of a few MB. Beyond it the
 * response is cut at the limit and a warning logged.
 */
export const MAX_SYNCZ_CLIENT_CONFIGS = 10_000;

/** The build this control plane reports, as istio's BuildInfo. */
export interface ControlPlaneBuild {
  version: string;
  /** The runtime (Node.js) version, in BuildInfo's golang_version field. */
  runtime: string;
}

/**
 * istiod's identifier: JSON of {Component, ID, Info} with istio's BuildInfo field names, which
 * `istioctl version` and proxy-status decode to name the control plane and its version.
 */
export function controlPlaneIdentifier(podName: string, build: ControlPlaneBuild): string {
  return JSON.stringify({
    Component: 'istiod',
    ID: podName,
    Info: {
      version: build.version,
      revision: 'unknown',
      golang_version: build.runtime,
      status: 'Clean',
      tag: build.version,
    },
  });
}

/** The streams a caller may see: every one for the system namespace, else its own namespace's. */
export function visibleTo(callerNamespace: string, systemNamespace: string): (s: DeltaStream) => boolean {
  if (callerNamespace === systemNamespace) return (s) => s.node !== undefined;
  return (s) => s.node !== undefined && s.node.namespace === callerNamespace;
}

export function clientConfig(stream: DeltaStream): ClientConfigMessage {
  const node = stream.node;
  const fields: Record<string, { stringValue: string }> = {};
  // istiod sends these three, each only when set.
  const meta: [string, string | undefined][] = [
    ['CLUSTER_ID', node?.clusterId],
    ['NAMESPACE', node?.namespace],
    ['ISTIO_VERSION', node?.metadata['ISTIO_VERSION']],
  ];
  for (const [k, v] of meta) if (v) fields[k] = { stringValue: v };
  const configs = [...stream.subs.values()]
    .sort((a, b) => (a.typeUrl < b.typeUrl ? -1 : a.typeUrl > b.typeUrl ? 1 : 0))
    .map((sub) => {
      const c: ClientConfigMessage['generic_xds_configs'][number] = {
        type_url: sub.typeUrl,
        config_status: syncStatus(sub),
      };
      if (sub.sentAt) c.last_updated = timestamp(sub.sentAt);
      const error = currentError(sub);
      if (error) c.error_state = { last_update_attempt: timestamp(sub.sentAt ?? error.at), details: error.message };
      return c;
    });
  // istiod names the proxy by its id (the node id's third part, "pod.namespace"), not the whole node
  // id: proxy-status prints it as the NAME and `proxy-status <pod>.<ns>` looks it up by it.
  return { node: { id: node?.proxyId ?? '', metadata: { fields } }, generic_xds_configs: configs };
}

export interface SynczSelection {
  configs: ClientConfigMessage[];
  /** Visible streams left out at MAX_SYNCZ_CLIENT_CONFIGS. */
  omitted: number;
}

/** The visible streams' ClientConfigs, by node id, at most `limit` of them. */
export function synczClientConfigs(
  streams: Iterable<DeltaStream>,
  visible: (s: DeltaStream) => boolean,
  limit = MAX_SYNCZ_CLIENT_CONFIGS,
): SynczSelection {
  const chosen: DeltaStream[] = [];
  let omitted = 0;
  for (const s of streams) {
    if (!visible(s)) continue;
    if (chosen.length < limit) chosen.push(s);
    else omitted++;
  }
  const configs = chosen.map(clientConfig);
  configs.sort((a, b) => (a.node.id < b.node.id ? -1 : a.node.id > b.node.id ? 1 : 0));
  return { configs, omitted };
}
