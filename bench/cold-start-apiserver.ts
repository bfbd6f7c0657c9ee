// Child process of the cold-start bench: the wire-faithful test API server seeded with a 100k-pod
// mesh, in a process of its own so that serving the list costs the measured server nothing. It
// prints one JSON line ({kubeconfig, token}) once seeded and exits when its stdin closes.

import { TestApiServer, serviceAccountIdentity } from '../test/support/apiserver';

export const PROBE_TOKEN = 'cold-start-probe-token';

async function main(): Promise<void> {
  const pods = Number(process.argv[2] ?? '100000');
  const namespaces = 100;
  const nodes = 1000;
  const servicesPerNamespace = 100;
  const api = await TestApiServer.start();
  api.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'istio-system' } });
  for (let n = 0; n < namespaces; n++)
    api.put({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: `ns-${n}`, labels: { 'istio.io/dataplane-mode': 'ambient' } },
    });
  for (let n = 0; n < nodes; n++) api.put({ apiVersion: 'v1', kind: 'Node', metadata: { name: `node-${n}` } });
  for (let n = 0; n < namespaces; n++)
    for (let s = 0; s < servicesPerNamespace; s++)
      api.put({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: `svc-${s}`, namespace: `ns-${n}` },
        spec: {
          selector: { app: `app-${s}` },
          clusterIP: `10.96.${n}.${s}`,
          clusterIPs: [`10.96.${n}.${s}`],
          ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
        },
      });
  for (let i = 0; i < pods; i++) {
    const ns = `ns-${i % namespaces}`;
    const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    api.put({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `pod-${i}`,
        namespace: ns,
        labels: { app: `app-${Math.floor(i / namespaces) % servicesPerNamespace}`, version: 'v1' },
        annotations: { 'ambient.istio.io/redirection': 'enabled' },
      },
      spec: {
        nodeName: `node-${i % nodes}`,
        serviceAccountName: `sa-${i % 10}`,
        containers: [{ name: 'app', image: 'registry.example/app:1.0', ports: [{ containerPort: 8080 }] }],
      },
      status: {
        phase: 'Running',
        podIP: ip,
        podIPs: [{ ip }],
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    });
  }
  api.registerToken(
    PROBE_TOKEN,
    // Bound to pod-0 (service account sa-0) as ztunnel's own token is, so the CA caches the review
    // once its store holds the pod.
    serviceAccountIdentity({
      namespace: 'ns-0',
      serviceAccount: 'sa-0',
      podName: 'pod-0',
      podUid: api.get('v1', 'Pod', 'ns-0', 'pod-0')?.metadata.uid ?? 'none',
      audiences: ['istio-ca'],
    }),
  );
  process.stdout.write(JSON.stringify({ kubeconfig: api.writeKubeconfig() }) + '\n');
  process.stdin.resume();
  process.stdin.on('end', () => {
    void api.close().then(() => process.exit(0));
  });
}

if (require.main === module) void main();
