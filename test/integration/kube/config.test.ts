import net from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  assertReachable,
  connectKubernetes,
  KubeClient,
  KubeUnreachableError,
  loadKubeConfig,
} from '../../../src/store/kube';
import { MemoryStore } from '../../../src/store/memory-store';
import { TestApiServer } from '../../support/apiserver';

test('a --kubeconfig that does not exist is named in the error', () => {
  expect(() => loadKubeConfig('/nonexistent/kubeconfig')).toThrow('--kubeconfig /nonexistent/kubeconfig: no such file');
});

test('without any configuration the error suggests local mode', () => {
  const home = mkdtempSync(path.join(tmpdir(), 'home-'));
  expect(() => loadKubeConfig('', { HOME: home })).toThrow(/no Kubernetes cluster configured.*--configDir/);
});

test('$KUBECONFIG is used when no --kubeconfig is given', async () => {
  const server = await TestApiServer.start();
  try {
    const kc = loadKubeConfig('', { KUBECONFIG: server.writeKubeconfig() });
    expect(kc.getCurrentCluster()?.server).toBe(server.url);
  } finally {
    await server.close();
  }
});

test('an API server that does not answer fails the reachability check with advice', async () => {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  const dir = mkdtempSync(path.join(tmpdir(), 'kc-'));
  const file = path.join(dir, 'kubeconfig');
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  const check = assertReachable(new KubeClient(loadKubeConfig(file)), 500);
  await expect(check).rejects.toBeInstanceOf(KubeUnreachableError);
  await expect(check).rejects.toThrow(new RegExp(`127\\.0\\.0\\.1:${port}.*--configDir`));
});

test('connectKubernetes builds source, leader elector and writer on a reachable server', async () => {
  const server = await TestApiServer.start();
  try {
    server.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'istio-system' } });
    const store = new MemoryStore();
    const kube = await connectKubernetes({
      kubeconfig: server.writeKubeconfig(),
      systemNamespace: 'istio-system',
      podName: 'istiod-0',
      store,
    });
    expect(kube.leader.identity).toBe('istiod-0');
    await kube.source.start();
    await store.whenSynced();
    expect(store.get('Namespace', undefined, 'istio-system')).toBeDefined();
    await kube.source.stop();
    expect(server.requests.every((r) => r.userAgent === 'istiod-ts/istiod-0' || r.verb === 'watch')).toBe(true);
  } finally {
    await server.close();
  }
});
