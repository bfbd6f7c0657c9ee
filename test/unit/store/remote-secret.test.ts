// Reading remote secrets: which keys become clusters, each limit hit exactly (the largest allowed
// input is read, one more is refused with a reason naming the key), kubeconfigs that would read a
// file or run a program refused, and no error ever quoting a credential.

import {
  buildRemoteKubeConfig,
  clusterIdProblem,
  MAX_CLUSTER_ID_LENGTH,
  MAX_REMOTE_CLUSTERS,
  MAX_REMOTE_KUBECONFIG_BYTES,
  parseRemoteSecret,
  redactCredentials,
  RemoteKubeconfigError,
} from '../../../src/store/kube/remote-secret';
import { b64, remoteKubeconfig, remoteToken } from '../../support/store/remote-secret';

const SERVER = 'https://remote.example:6443';

function refusal(text: string): RemoteKubeconfigError {
  try {
    buildRemoteKubeConfig(text);
  } catch (err) {
    if (err instanceof RemoteKubeconfigError) return err;
    throw err;
  }
  throw new Error('expected a RemoteKubeconfigError');
}

describe('parseRemoteSecret', () => {
  test('each key is a cluster id and each value a kubeconfig, in key order', () => {
    const a = remoteKubeconfig('cluster-a', { server: SERVER });
    const b = remoteKubeconfig('cluster-b', { server: SERVER });
    const parsed = parseRemoteSecret({ 'cluster-b': b64(b), 'cluster-a': b64(a) }, 'Kubernetes');
    expect([...parsed.clusters.keys()]).toEqual(['cluster-a', 'cluster-b']);
    expect(parsed.clusters.get('cluster-a')).toBe(a);
    expect(parsed.problems).toEqual([]);
  });

  test('the local cluster id is skipped with a reason naming the key (istiod skips it too)', () => {
    const text = remoteKubeconfig('x', { server: SERVER });
    const parsed = parseRemoteSecret({ Kubernetes: b64(text), remote: b64(text) }, 'Kubernetes');
    expect([...parsed.clusters.keys()]).toEqual(['remote']);
    expect(parsed.problems.map((p) => [p.key, p.reason])).toEqual([['Kubernetes', 'local-cluster-id']]);
    expect(parsed.problems[0]!.message).toMatch(/^key "Kubernetes": .*CLUSTER_ID/);
  });

  test('cluster ids keep the Secret key grammar, up to MAX_CLUSTER_ID_LENGTH', () => {
    expect(clusterIdProblem('a'.repeat(MAX_CLUSTER_ID_LENGTH))).toBeUndefined();
    expect(clusterIdProblem('a'.repeat(MAX_CLUSTER_ID_LENGTH + 1))).toMatch(/longer than 253/);
    expect(clusterIdProblem('east_1.prod-2')).toBeUndefined();
    for (const bad of ['', '.', '..', 'a/b', 'a b', 'é'])
      expect({ id: bad, refused: typeof clusterIdProblem(bad) === 'string' }).toEqual({ id: bad, refused: true });
    const text = b64(remoteKubeconfig('x', { server: SERVER }));
    const parsed = parseRemoteSecret({ 'a/b': text, ok: text }, 'Kubernetes');
    expect([...parsed.clusters.keys()]).toEqual(['ok']);
    expect(parsed.problems.map((p) => [p.key, p.reason])).toEqual([['a/b', 'invalid-cluster-id']]);
  });

  test('a value that is not base64 or not UTF-8 is refused, naming the key', () => {
    const parsed = parseRemoteSecret(
      { a: 'not base64!', b: 42, c: Buffer.from([0xff, 0xfe, 0xfd]).toString('base64') },
      'K',
    );
    expect(parsed.clusters.size).toBe(0);
    expect(parsed.problems.map((p) => [p.key, p.reason])).toEqual([
      ['a', 'not-base64'],
      ['b', 'not-base64'],
      ['c', 'invalid-kubeconfig'],
    ]);
    expect(parsed.problems[0]!.message).toMatch(/^key "a": /);
  });

  test('MAX_REMOTE_KUBECONFIG_BYTES: a kubeconfig of exactly the limit is read, one byte more is refused', () => {
    for (const size of [MAX_REMOTE_KUBECONFIG_BYTES - 1, MAX_REMOTE_KUBECONFIG_BYTES]) {
      const parsed = parseRemoteSecret({ c: b64('x'.repeat(size)) }, 'K');
      expect({ size, read: parsed.clusters.get('c')?.length }).toEqual({ size, read: size });
    }
    const parsed = parseRemoteSecret({ big: b64('x'.repeat(MAX_REMOTE_KUBECONFIG_BYTES + 1)) }, 'K');
    expect(parsed.clusters.size).toBe(0);
    expect(parsed.problems).toEqual([
      {
        key: 'big',
        reason: 'too-large',
        message: `key "big": the kubeconfig is larger than ${MAX_REMOTE_KUBECONFIG_BYTES} bytes`,
      },
    ]);
  });

  test('MAX_REMOTE_CLUSTERS: one secret may name that many clusters; the keys past it are refused', () => {
    const text = b64('k');
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `c${String(i).padStart(4, '0')}`);
    expect(
      parseRemoteSecret(Object.fromEntries(ids(MAX_REMOTE_CLUSTERS).map((id) => [id, text])), 'K').clusters.size,
    ).toBe(MAX_REMOTE_CLUSTERS);
    const over = parseRemoteSecret(Object.fromEntries(ids(MAX_REMOTE_CLUSTERS + 2).map((id) => [id, text])), 'K');
    expect(over.clusters.size).toBe(MAX_REMOTE_CLUSTERS);
    expect(over.problems.map((p) => [p.key, p.reason])).toEqual([
      [ids(MAX_REMOTE_CLUSTERS + 2)[MAX_REMOTE_CLUSTERS], 'too-many-clusters'],
      [ids(MAX_REMOTE_CLUSTERS + 2)[MAX_REMOTE_CLUSTERS + 1], 'too-many-clusters'],
    ]);
  });

  test('no data, or data that is not a mapping, is no cluster', () => {
    expect(parseRemoteSecret(undefined, 'K')).toEqual({ clusters: new Map(), problems: [] });
    expect(parseRemoteSecret('text', 'K')).toEqual({ clusters: new Map(), problems: [] });
  });
});

describe('buildRemoteKubeConfig', () => {
  test('a create-remote-secret kubeconfig gives its server and its token as a credential', () => {
    const built = buildRemoteKubeConfig(remoteKubeconfig('east', { server: SERVER + '/' }));
    expect(built.server).toBe(SERVER);
    expect(built.kubeConfig.getCurrentUser()?.token).toBe(remoteToken('east'));
    expect(built.credentials).toEqual([remoteToken('east')]);
  });

  test.each([
    [
      'exec',
      { user: { exec: { command: '/bin/sh', apiVersion: 'client.authentication.k8s.io/v1' } } },
      'users[0].user.exec',
    ],
    ['token-file', { user: { 'token-file': '/etc/shadow' } }, 'users[0].user.token-file'],
    ['client-key', { user: { 'client-key': '/etc/key.pem' } }, 'users[0].user.client-key'],
    ['client-certificate', { user: { 'client-certificate': '/etc/cert.pem' } }, 'users[0].user.client-certificate'],
    ['auth-provider gcp', { user: { 'auth-provider': { name: 'gcp' } } }, 'users[0].user.auth-provider'],
    [
      'certificate-authority',
      { cluster: { 'certificate-authority': '/etc/ca.pem' } },
      'clusters[0].cluster.certificate-authority',
    ],
  ])('%s reads a local file or runs a program: refused before anything is read', (_, extra, field) => {
    const err = refusal(remoteKubeconfig('east', { server: SERVER, ...extra }));
    expect(err.reason).toBe('unsafe-kubeconfig');
    expect(err.message).toContain(field);
  });

  test('an oidc auth-provider is allowed, as istiod allows it', () => {
    const text = remoteKubeconfig('east', {
      server: SERVER,
      user: { 'auth-provider': { name: 'oidc', config: { 'id-token': 'oidc-id-token-secret-value' } } },
    });
    expect(buildRemoteKubeConfig(text).credentials).toContain('oidc-id-token-secret-value');
  });

  test('bad YAML is named by line and column, and the text (with its token) is never quoted', () => {
    const text = `${remoteKubeconfig('east', { server: SERVER })}users: [${remoteToken('east')}\n  : {`;
    const err = refusal(text);
    expect(err.reason).toBe('invalid-kubeconfig');
    expect(err.message).toMatch(/^the kubeconfig is not valid YAML at line \d+, column \d+$/);
    expect(err.message).not.toContain(remoteToken('east'));
  });

  test.each([
    ['empty', '', /is empty/],
    ['not a mapping', '- a\n- b\n', /not a YAML mapping/],
    [
      'no current context',
      remoteKubeconfig('east', { server: SERVER }).replace(/^current-context:.*$/m, ''),
      /no current-context/,
    ],
    ['server not a URL', remoteKubeconfig('east', { server: 'not a url' }), /not a URL/],
    ['server not http(s)', remoteKubeconfig('east', { server: 'file:///etc/passwd' }), /not an http\(s\) URL/],
  ])('%s: refused with a reason', (_, text, message) => {
    const err = refusal(text);
    expect(err.reason).toBe('invalid-kubeconfig');
    expect(err.message).toMatch(message);
    expect(err.message).not.toContain(remoteToken('east'));
  });

  test('a server URL carrying credentials is refused without quoting them', () => {
    const err = refusal(remoteKubeconfig('east', { server: 'https://admin:hunter2-password@remote.example' }));
    expect(err.reason).toBe('unsafe-kubeconfig');
    expect(err.message).not.toContain('hunter2');
  });

  test('client-node refusals that only name a missing field are passed on', () => {
    const text = 'apiVersion: v1\nclusters:\n- name: a\n  cluster: {}\ncontexts: []\nusers: []\n';
    expect(refusal(text).message).toBe('the kubeconfig cannot be loaded: clusters[0].cluster.server is missing');
  });

  test('redactCredentials takes every credential out of a message, the longest first', () => {
    const { credentials } = buildRemoteKubeConfig(
      remoteKubeconfig('east', { server: SERVER, user: { username: 'admin', password: 'p4ssw0rd-long' } }),
    );
    const basic = Buffer.from('admin:p4ssw0rd-long').toString('base64');
    const text = `GET failed: token ${remoteToken('east')} password p4ssw0rd-long basic ${basic}`;
    expect(redactCredentials(text, credentials)).toBe(
      'GET failed: token [redacted] password [redacted] basic [redacted]',
    );
  });
});
