// Which cluster to talk to: an explicit kubeconfig file, else the in-cluster service account,
// else $KUBECONFIG or ~/.kube/config, and a reachability check that fails with advice.

import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from './client';

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';
/** How long the startup check waits for GET /version. */
export const REACHABILITY_TIMEOUT_MS = 5_000;

export class KubeUnreachableError extends Error {}

/** Loads the client configuration; throws naming what was tried when there is none. */
export function loadKubeConfig(
  kubeconfigPath: string,
  env: Record<string, string | undefined> = process.env,
): KubeConfig {
  const kc = new KubeConfig();
  if (kubeconfigPath !== '') {
    if (!existsSync(kubeconfigPath)) throw new KubeUnreachableError(`--kubeconfig ${kubeconfigPath}: no such file`);
    kc.loadFromFile(kubeconfigPath);
  } else if (env['KUBERNETES_SERVICE_HOST'] && existsSync(SERVICE_ACCOUNT_TOKEN)) {
    kc.loadFromCluster();
  } else {
    // client-node's loadFromDefault would fall back to http://localhost:8080; we would rather say
    // that nothing is configured.
    const fromEnv = (env['KUBECONFIG'] ?? '').split(path.delimiter).filter((f) => f !== '');
    const homeConfig = path.join(env['HOME'] || homedir(), '.kube', 'config');
    const files = fromEnv.length > 0 ? fromEnv : existsSync(homeConfig) ? [homeConfig] : [];
    for (const [i, file] of files.entries()) {
      if (i === 0) kc.loadFromFile(file);
      else {
        const more = new KubeConfig();
        more.loadFromFile(file);
        kc.mergeConfig(more);
      }
    }
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster || !cluster.server) {
    throw new KubeUnreachableError(
      'no Kubernetes cluster configured: not in a cluster, no --kubeconfig, no $KUBECONFIG and no ~/.kube/config; ' +
        'run without a cluster with --configDir DIR (local mode)',
    );
  }
  return kc;
}

/** Throws a KubeUnreachableError naming the server when GET /version does not answer. */
export async function assertReachable(client: KubeClient, timeoutMs = REACHABILITY_TIMEOUT_MS): Promise<void> {
  try {
    const res = await client.request({ method: 'GET', path: '/version', timeoutMs });
    if (res.status >= 400) throw new Error(`GET /version answered HTTP ${res.status}`);
  } catch (err) {
    throw new KubeUnreachableError(
      `cannot reach the Kubernetes API server at ${client.server}: ${(err as Error).message}; ` +
        'check --kubeconfig, or run without a cluster with --configDir DIR (local mode)',
    );
  }
}
