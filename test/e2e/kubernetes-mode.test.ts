// `istiod-ts --kubeconfig FILE` against the wire-faithful test API server: it becomes ready,
// shows the cluster's objects under /debug/config, and releases its leases on SIGTERM.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestApiServer } from '../support/apiserver';
import { ServerProcess, waitForStatus, LOOPBACK_LISTENER_ARGS } from '../support/cli';

describe('Kubernetes mode end to end', () => {
  let api: TestApiServer;
  let server: ServerProcess;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'istiod-ts-kube-'));
    api = await TestApiServer.start();
    api.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'istio-system' } });
    api.put({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'shop', labels: { 'istio.io/dataplane-mode': 'ambient' } },
    });
    api.put({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } });
    api.put({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'cart-1',
        namespace: 'shop',
        labels: { app: 'cart' },
        annotations: { 'ambient.istio.io/redirection': 'enabled' },
      },
      spec: { nodeName: 'node-1', serviceAccountName: 'cart', containers: [{ name: 'cart', image: 'cart:1' }] },
      status: { phase: 'Running', podIP: '10.1.0.5', podIPs: [{ ip: '10.1.0.5' }] },
    });
    api.put({
      apiVersion: 'security.istio.io/v1',
      kind: 'AuthorizationPolicy',
      metadata: { name: 'allow-frontend', namespace: 'shop' },
      spec: { action: 'ALLOW', rules: [{ from: [{ source: { principals: ['cluster.local/ns/shop/sa/frontend'] } }] }] },
    });
    server = ServerProcess.start(
      [
        '--kubeconfig',
        api.writeKubeconfig(),
        '--meshConfig',
        join(dir, 'no-such-mesh-file'),
        ...LOOPBACK_LISTENER_ARGS,
      ],
      { POD_NAME: 'istiod-e2e', ROOT_CA_DIR: join(dir, 'no-cacerts') },
    );
  });

  afterAll(async () => {
    // Either is unset when beforeAll failed before starting it.
    await (server as ServerProcess | undefined)?.stop();
    await (api as TestApiServer | undefined)?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('becomes ready and shows the cluster objects under /debug/config', async () => {
    const http = await server.port('http');
    await waitForStatus(`http://127.0.0.1:${http}/ready`, 200, 30_000);
    const pods = (await (await fetch(`http://127.0.0.1:${http}/debug/config?kind=Pod&namespace=shop`)).json()) as {
      objects: { metadata: { name: string } }[];
    };
    expect(pods.objects.map((p) => p.metadata.name)).toEqual(['cart-1']);
    const policies = (await (await fetch(`http://127.0.0.1:${http}/debug/config?kind=AuthorizationPolicy`)).json()) as {
      objects: { metadata: { name: string } }[];
    };
    expect(policies.objects.map((p) => p.metadata.name)).toEqual(['allow-frontend']);
  });

  it('creates the CA secret and distributes the root certificate to every namespace', async () => {
    await server.port('http');
    const secret = api.get('v1', 'Secret', 'istio-system', 'istio-ca-secret');
    expect(secret).toBeDefined();
    for (const ns of ['istio-system', 'shop']) {
      const deadline = Date.now() + 15_000;
      while (!api.get('v1', 'ConfigMap', ns, 'istio-ca-root-cert') && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      expect(api.get('v1', 'ConfigMap', ns, 'istio-ca-root-cert')?.['data']).toHaveProperty(['root-cert.pem']);
    }
  });

  it('exits 0 on SIGTERM', async () => {
    const { code } = await server.stop();
    expect(code).toBe(0);
  });
});
