// istiod-ts under test, in either of its modes, behind one interface the peer checks use: start and
// restart on the same ports, the root and a token a ztunnel is given, what the xds-client sees, and
// a way to change pods while everything runs (a file in local mode, the API in Kubernetes mode).

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { deterministicUid } from '../src/store/local/manifest';
import { serviceAccountIdentity, TestApiServer } from '../test/support/apiserver';
import { IstiodTs, type Ports } from './istiod-ts';
import type { Manifest } from './mesh/generate';
import type { ZtunnelPod } from './ztunnel';

/** The pod name istiod-ts runs as: istioctl shows it as the ISTIOD of each proxy. */
export const ISTIOD_POD_NAME = 'istiod-interop-0';

export interface ControlPlane {
  readonly mode: 'local' | 'kubernetes';
  readonly ports: Ports;
  readonly server: IstiodTs;
  start(): Promise<void>;
  stop(): Promise<void>;
  rootCert(): Promise<string>;
  token(pod: ZtunnelPod): string;
  /** The uid the pod has in the cluster, as the node agent reads it. */
  podUid(namespace: string, name: string): string;
  /** Creates or replaces the pods of a named group; an empty list removes the group's pods. */
  putPods(group: string, pods: readonly Manifest[]): Promise<void>;
  close(): Promise<void>;
}

/** Local mode: the folder is the cluster; a group of pods is one file in it. */
export class LocalControlPlane implements ControlPlane {
  readonly mode = 'local';
  readonly server: IstiodTs;

  constructor(
    readonly configDir: string,
    stateDir: string,
    readonly ports: Ports,
  ) {
    this.server = new IstiodTs({ configDir }, stateDir, ports, { POD_NAME: ISTIOD_POD_NAME });
  }

  start(): Promise<void> {
    return this.server.start();
  }

  stop(): Promise<void> {
    return this.server.stop();
  }

  rootCert(): Promise<string> {
    return Promise.resolve(this.server.rootCert());
  }

  token(pod: ZtunnelPod): string {
    return this.server.token(pod);
  }

  podUid(namespace: string, name: string): string {
    return deterministicUid('Pod', namespace, name);
  }

  putPods(group: string, pods: readonly Manifest[]): Promise<void> {
    const file = path.join(this.configDir, `interop-${group}.yaml`);
    if (pods.length === 0) rmSync(file, { force: true });
    else {
      // Written whole and renamed, as an editor saves, so the watcher never reads half a file.
      writeFileSync(`${file}.tmp`, pods.map((p) => stringify(p, { lineWidth: 0 })).join('---\n'));
      writeFileSync(file, readFileSync(`${file}.tmp`));
      rmSync(`${file}.tmp`);
    }
    return Promise.resolve();
  }

  close(): Promise<void> {
    return this.stop();
  }
}

/** Kubernetes mode against the project's wire-faithful test API server, which also answers TokenReviews. */
export class KubeControlPlane implements ControlPlane {
  readonly mode = 'kubernetes';
  readonly server: IstiodTs;
  private groups = new Map<string, Manifest[]>();

  private constructor(
    readonly api: TestApiServer,
    stateDir: string,
    readonly ports: Ports,
  ) {
    this.server = new IstiodTs({ kubeconfig: api.writeKubeconfig() }, stateDir, ports, {
      POD_NAME: ISTIOD_POD_NAME,
      ROOT_CA_DIR: path.join(stateDir, 'no-cacerts'),
    });
  }

  static async create(manifests: readonly Manifest[], stateDir: string, ports: Ports): Promise<KubeControlPlane> {
    const api = await TestApiServer.start();
    for (const m of manifests) api.put(m);
    return new KubeControlPlane(api, stateDir, ports);
  }

  start(): Promise<void> {
    return this.server.start();
  }

  stop(): Promise<void> {
    return this.server.stop();
  }

  /** The root istiod-ts published in ztunnel's namespace, as the kubelet mounts it from the ConfigMap. */
  async rootCert(): Promise<string> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const cm = this.api.get('v1', 'ConfigMap', 'istio-system', 'istio-ca-root-cert') as
        { data?: Record<string, string> } | undefined;
      const pem = cm?.data?.['root-cert.pem'];
      if (pem) return pem;
      if (Date.now() > deadline) throw new Error('istio-ca-root-cert was not published in istio-system');
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** A bound token for the pod as stored (its real uid), registered for the API server's TokenReview. */
  token(pod: ZtunnelPod): string {
    const uid = this.podUid(pod.namespace, pod.name);
    const token = `interop-${pod.namespace}-${pod.name}-${uid}`;
    this.api.registerToken(
      token,
      serviceAccountIdentity({
        namespace: pod.namespace,
        serviceAccount: pod.serviceAccount,
        podName: pod.name,
        podUid: uid,
        audiences: ['istio-ca'],
      }),
    );
    return token;
  }

  podUid(namespace: string, name: string): string {
    const uid = this.api.get('v1', 'Pod', namespace, name)?.metadata.uid;
    if (typeof uid !== 'string') throw new Error(`pod ${namespace}/${name} is not in the API server`);
    return uid;
  }

  putPods(group: string, pods: readonly Manifest[]): Promise<void> {
    const before = this.groups.get(group) ?? [];
    const keep = new Set(pods.map((p) => `${p.metadata.namespace ?? ''}/${p.metadata.name}`));
    for (const p of before)
      if (!keep.has(`${p.metadata.namespace ?? ''}/${p.metadata.name}`))
        this.api.delete('v1', 'Pod', p.metadata.namespace ?? '', p.metadata.name);
    for (const p of pods) this.api.put(p);
    this.groups.set(group, [...pods]);
    return Promise.resolve();
  }

  async close(): Promise<void> {
    await this.stop();
    await this.api.close();
  }
}
