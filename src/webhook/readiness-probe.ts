// istiod's check that its webhook is really in the API server's path before failurePolicy
// becomes Fail: a dry-run create of a Gateway that the webhook always rejects. Only a rejection
// by the webhook (or a cluster without the Gateway CRD, or without dry-run support) proves it.

import type { KubeObject } from '../store/types';
import { KubeApiError, type KubeClient } from '../store/kube/client';
import { KubeWriter, isAlreadyExists } from '../store/kube/writes';
import { ALWAYS_REJECT_ANNOTATION } from './validators/metadata';

export const PROBE_GATEWAY_NAME = 'invalid-gateway';
const GATEWAYS = { group: 'networking.istio.io', version: 'v1', plural: 'gateways' };

/** Error texts that mean "the webhook is in the path" (or cannot be, and never will be). */
export const READY_ERROR_TEXTS = [
  'denied the request',
  'the server could not find the requested resource',
  'does not support dry run',
] as const;

export function probeGateway(namespace: string, revision: string): KubeObject {
  return {
    apiVersion: 'networking.istio.io/v1',
    kind: 'Gateway',
    metadata: {
      name: PROBE_GATEWAY_NAME,
      namespace,
      labels: { 'istio.io/rev': revision },
      annotations: { [ALWAYS_REJECT_ANNOTATION]: 'true' },
    },
    spec: {},
  };
}

/** True when the dry-run outcome proves the webhook rejects invalid config. */
export function probeOutcomeReady(err: unknown): boolean {
  if (err === undefined) return false;
  if (err instanceof KubeApiError && err.status === 404) return true;
  // Every failure of the write path is an Error; a bare string is read as its text.
  const text = err instanceof Error ? err.message : typeof err === 'string' ? err : '';
  return READY_ERROR_TEXTS.some((t) => text.includes(t));
}

/** Runs the dry-run create (an update if the Gateway exists) and classifies the answer. */
export async function webhookRejectsInvalidConfig(
  client: KubeClient,
  namespace: string,
  revision: string,
): Promise<{ ready: boolean; detail: string }> {
  const gateway = probeGateway(namespace, revision);
  // One try: a webhook that cannot be called is an answer here, and the controller probes again.
  const writer = new KubeWriter(client, { maxAttempts: 1 });
  const ref = { ...GATEWAYS, namespace, name: PROBE_GATEWAY_NAME };
  try {
    await writer.create(ref, gateway, { dryRun: true });
    return { ready: false, detail: 'the always-reject Gateway was accepted: the webhook is not called yet' };
  } catch (err) {
    if (isAlreadyExists(err)) {
      try {
        const current = await writer.get(ref);
        await writer.update(
          ref,
          { ...gateway, metadata: { ...gateway.metadata, resourceVersion: current?.metadata.resourceVersion } },
          { dryRun: true },
        );
        return { ready: false, detail: 'the always-reject Gateway update was accepted: the webhook is not called yet' };
      } catch (updateErr) {
        return { ready: probeOutcomeReady(updateErr), detail: (updateErr as Error).message };
      }
    }
    return { ready: probeOutcomeReady(err), detail: (err as Error).message };
  }
}
