import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { loadOrCreateTokenKey, signLocalToken, TokenSubject } from '../../../src/security/local-jwt';
import type { KubeObject } from '../../../src/store/types';
import { makeCsr, opensslText, opensslVerify, peculiarSan } from '../../support/ca/fixtures';
import { Harness, ZtunnelLikeClient, readRoot, startHarness } from '../../support/ca/harness';

const TD = 'cluster.local';
const id = (ns: string, sa: string) => `spiffe://${TD}/ns/${ns}/sa/${sa}`;

function pod(
  ns: string,
  name: string,
  uid: string,
  sa: string,
  node: string | undefined,
  phase = 'Running',
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, uid },
    spec: { serviceAccountName: sa, ...(node ? { nodeName: node } : {}) },
    status: { phase },
  };
}

const ZTUNNEL_A: TokenSubject = {
  namespace: 'istio-system',
  serviceAccount: 'ztunnel',
  podName: 'ztunnel-a',
  podUid: 'uid-zt-a',
};

describe('the CA called as ztunnel calls it (local mode)', () => {
  let h: Harness;
  let client: ZtunnelLikeClient;
  let key: crypto.KeyObject;
  const token = (s: TokenSubject, aud = ['istio-ca'], ttl = 3600, now = Date.now()) =>
    signLocalToken(key, s, aud, ttl, now);

  beforeAll(async () => {
    h = await startHarness();
    key = loadOrCreateTokenKey(h.stateDir);
    h.store.upsert('Pod', [
      pod('istio-system', 'ztunnel-a', 'uid-zt-a', 'ztunnel', 'node-a'),
      pod('istio-system', 'ztunnel-nonode', 'uid-zt-x', 'ztunnel', undefined),
      pod('default', 'sleep-1', 'uid-sleep', 'sleep', 'node-a'),
      pod('default', 'httpbin-1', 'uid-httpbin', 'httpbin', 'node-b'),
      pod('default', 'job-1', 'uid-job', 'job', 'node-a', 'Succeeded'),
      pod('default', 'crashed-1', 'uid-crashed', 'crashed', 'node-a', 'Failed'),
    ]);
    client = new ZtunnelLikeClient(h.port, readRoot(h));
  });

  afterAll(async () => {
    client.close();
    await h.close();
  });

  test.each([
    ['zero', 0],
    ['a negative', -5],
  ])('%s requested validity gets the default lifetime, as istiod gives it', async (_what, validitySeconds) => {
    const csr = await makeCsr(id('default', 'sleep'));
    const res = await client.createCertificate(csr.pem, {
      token: token(ZTUNNEL_A),
      clusterId: 'Kubernetes',
      impersonate: id('default', 'sleep'),
      validitySeconds,
    });
    const leaf = new crypto.X509Certificate(res.cert_chain[0]!);
    const lifetime = new Date(leaf.validTo).getTime() - Date.now();
    // DEFAULT_WORKLOAD_CERT_TTL is 24h; the call itself takes well under a minute.
    expect(Math.abs(lifetime - 24 * 3600_000)).toBeLessThan(60_000);
  });

  test('a fresh P-256 CSR for a workload on the ztunnel node gets a chain that openssl verifies, with exactly the requested critical URI SAN', async () => {
    const csr = await makeCsr(id('default', 'sleep'));
    const res = await client.createCertificate(csr.pem, {
      token: token(ZTUNNEL_A),
      clusterId: 'Kubernetes',
      impersonate: id('default', 'sleep'),
    });
    expect(res.cert_chain.length).toBeGreaterThanOrEqual(2);
    for (const pem of res.cert_chain) expect(pem.endsWith('\n')).toBe(true);
    const [leaf] = res.cert_chain as [string];
    expect(res.cert_chain[res.cert_chain.length - 1]).toBe(readRoot(h));
    expect(opensslVerify(readRoot(h), leaf, res.cert_chain.slice(1, -1).join(''))).toContain('OK');
    expect(peculiarSan(leaf)).toEqual({ critical: true, uris: [id('default', 'sleep')], dns: [], ips: [] });
    expect(opensslText(leaf)).toMatch(
      /X509v3 Subject Alternative Name: critical\s+URI:spiffe:\/\/cluster\.local\/ns\/default\/sa\/sleep\s*\n/,
    );
    // The leaf carries the CSR's key: it matches the private key ztunnel kept.
    expect(new crypto.X509Certificate(leaf).checkPrivateKey(crypto.createPrivateKey(csr.keyPem))).toBe(true);
  });

  test('without ImpersonatedIdentity the certificate is for the caller itself, whatever the CSR asks', async () => {
    const csr = await makeCsr(id('default', 'someone-else'));
    const res = await client.createCertificate(csr.pem, {
      token: token({ namespace: 'default', serviceAccount: 'sleep', podName: 'sleep-1', podUid: 'uid-sleep' }),
      clusterId: '',
    });
    expect(peculiarSan(res.cert_chain[0]!).uris).toEqual([id('default', 'sleep')]);
  });

  test('the leaf lives validity_duration seconds, back-dated 2 minutes', async () => {
    const before = Date.now();
    const res = await client.createCertificate((await makeCsr()).pem, {
      token: token(ZTUNNEL_A),
      validitySeconds: 3600,
    });
    const cert = new crypto.X509Certificate(res.cert_chain[0]!);
    const notBefore = new Date(cert.validFrom).getTime();
    const notAfter = new Date(cert.validTo).getTime();
    expect(notAfter - notBefore).toBe(3600_000 + 120_000);
    expect(notBefore).toBeLessThanOrEqual(before - 119_000);
  });

  test('validity_duration 0 gets DEFAULT_WORKLOAD_CERT_TTL (24h)', async () => {
    const res = await client.createCertificate((await makeCsr()).pem, { token: token(ZTUNNEL_A), validitySeconds: 0 });
    const cert = new crypto.X509Certificate(res.cert_chain[0]!);
    expect(new Date(cert.validTo).getTime() - new Date(cert.validFrom).getTime()).toBe(24 * 3600_000 + 120_000);
  });

  test('a caller with a mesh client certificate is identified by its URI SAN, without a token', async () => {
    const csr = await makeCsr();
    const issued = await client.createCertificate(csr.pem, {
      token: token(ZTUNNEL_A),
      impersonate: id('default', 'sleep'),
    });
    const mtls = new ZtunnelLikeClient(h.port, readRoot(h), {
      certPem: issued.cert_chain.slice(0, -1).join(''),
      keyPem: csr.keyPem,
    });
    try {
      const res = await mtls.createCertificate((await makeCsr()).pem);
      expect(peculiarSan(res.cert_chain[0]!).uris).toEqual([id('default', 'sleep')]);
    } finally {
      mtls.close();
    }
  });

  describe('node authorization: every denial and the allow case', () => {
    const cases: [string, TokenSubject, string, string | null][] = [
      ['a trusted ztunnel asking for a workload on its own node is allowed', ZTUNNEL_A, id('default', 'sleep'), null],
      [
        'a caller that is not in CA_TRUSTED_NODE_ACCOUNTS is denied',
        { namespace: 'default', serviceAccount: 'sleep', podName: 'sleep-1', podUid: 'uid-sleep' },
        id('default', 'httpbin'),
        'caller_not_trusted',
      ],
      ['an identity that is not a SPIFFE id is denied', ZTUNNEL_A, 'default/sleep', 'invalid_identity'],
      [
        'an identity in a foreign trust domain is denied',
        ZTUNNEL_A,
        'spiffe://evil.example/ns/default/sa/sleep',
        'untrusted_trust_domain',
      ],
      [
        'a caller whose pod does not exist is denied',
        { ...ZTUNNEL_A, podName: 'ztunnel-gone' },
        id('default', 'sleep'),
        'caller_pod_unknown',
      ],
      [
        'a caller whose pod was recreated with a new uid is denied',
        { ...ZTUNNEL_A, podUid: 'uid-old' },
        id('default', 'sleep'),
        'caller_pod_mismatch',
      ],
      [
        'a caller whose pod runs as another service account is denied',
        { ...ZTUNNEL_A, serviceAccount: 'ztunnel', podName: 'sleep-1', podUid: 'uid-sleep' },
        id('default', 'sleep'),
        'caller_pod_mismatch',
      ],
      [
        'a caller whose pod is not bound to a node is denied',
        { ...ZTUNNEL_A, podName: 'ztunnel-nonode', podUid: 'uid-zt-x' },
        id('default', 'sleep'),
        'caller_pod_unscheduled',
      ],
      ['an identity with pods only on another node is denied', ZTUNNEL_A, id('default', 'httpbin'), 'no_pod_on_node'],
      [
        'an identity whose only pod on the node has Succeeded is denied',
        ZTUNNEL_A,
        id('default', 'job'),
        'no_pod_on_node',
      ],
      [
        'an identity whose only pod on the node has Failed is denied',
        ZTUNNEL_A,
        id('default', 'crashed'),
        'no_pod_on_node',
      ],
    ];

    test.each(cases)('%s', async (_name, caller, requested, denial) => {
      const csr = (await makeCsr()).pem;
      const call = client.createCertificate(csr, {
        token: token(caller),
        clusterId: 'Kubernetes',
        impersonate: requested,
      });
      if (denial === null) {
        const res = await call;
        expect(peculiarSan(res.cert_chain[0]!).uris).toEqual([requested]);
        return;
      }
      await expect(call).rejects.toMatchObject({
        code: grpc.status.UNAUTHENTICATED,
        details: 'request impersonation authentication failure',
      });
      const metric = await h.metrics.getSingleMetric('citadel_server_node_authorization_denial_count')!.get();
      expect(metric.values.find((v) => v.labels['reason'] === denial)?.value).toBeGreaterThanOrEqual(1);
    });
  });

  describe('bad input gets the right gRPC code, and the server keeps serving', () => {
    const good = () => token(ZTUNNEL_A);
    const cases: [string, () => Promise<Parameters<ZtunnelLikeClient['createCertificate']>>, grpc.status, RegExp][] = [
      ['an empty CSR', () => Promise.resolve(['', { token: good() }]), grpc.status.INVALID_ARGUMENT, /CSR is empty/],
      [
        'a garbage CSR',
        () => Promise.resolve(['not a csr', { token: good() }]),
        grpc.status.INVALID_ARGUMENT,
        /not PEM/,
      ],
      [
        'an oversized CSR',
        async () => [(await makeCsr()).pem + 'x'.repeat(70_000), { token: good() }],
        grpc.status.INVALID_ARGUMENT,
        /larger than 65536 bytes/,
      ],
      [
        'two CSRs in one PEM',
        async () => [(await makeCsr()).pem + (await makeCsr()).pem, { token: good() }],
        grpc.status.INVALID_ARGUMENT,
        /exactly one/,
      ],
      [
        'an RSA-1024 key',
        async () => [(await makeCsr(undefined, 'RSA-1024')).pem, { token: good() }],
        grpc.status.INVALID_ARGUMENT,
        /too small/,
      ],
      [
        'a validity above MAX_WORKLOAD_CERT_TTL',
        async () => [(await makeCsr()).pem, { token: good(), validitySeconds: 91 * 86400 }],
        grpc.status.INVALID_ARGUMENT,
        /greater than the max allowed TTL/,
      ],
      [
        'a validity beyond int53',
        async () => [(await makeCsr()).pem, { token: good(), validitySeconds: '9223372036854775807' }],
        grpc.status.INVALID_ARGUMENT,
        /greater than the max allowed TTL/,
      ],
      [
        'an ImpersonatedIdentity that is a number',
        async () => [(await makeCsr()).pem, { token: good(), impersonate: { numberValue: 3 } }],
        grpc.status.INVALID_ARGUMENT,
        /must be a string/,
      ],
      [
        'an ImpersonatedIdentity that is not a SPIFFE id',
        async () => [(await makeCsr()).pem, { token: good(), impersonate: 'sleep' }],
        grpc.status.UNAUTHENTICATED,
        /impersonation/,
      ],
      [
        'no credentials at all',
        async () => [(await makeCsr()).pem, {}],
        grpc.status.UNAUTHENTICATED,
        /^request authenticate failure$/,
      ],
      [
        'a token for another audience',
        async () => [(await makeCsr()).pem, { token: token(ZTUNNEL_A, ['other']) }],
        grpc.status.UNAUTHENTICATED,
        /^request authenticate failure$/,
      ],
      [
        'an expired token',
        async () => [(await makeCsr()).pem, { token: token(ZTUNNEL_A, ['istio-ca'], 60, Date.now() - 3600_000) }],
        grpc.status.UNAUTHENTICATED,
        /^request authenticate failure$/,
      ],
      [
        'a token signed by another key',
        async () => [
          (await makeCsr()).pem,
          {
            token: signLocalToken(
              crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey,
              ZTUNNEL_A,
              ['istio-ca'],
              600,
            ),
          },
        ],
        grpc.status.UNAUTHENTICATED,
        /^request authenticate failure$/,
      ],
      [
        'a clusterid of an unknown cluster',
        async () => [(await makeCsr()).pem, { token: good(), clusterId: 'other-cluster' }],
        grpc.status.UNAUTHENTICATED,
        /^request authenticate failure$/,
      ],
    ];

    test.each(cases)('%s', async (_name, args, code, details) => {
      const [csr, opts] = await args();
      await expect(client.createCertificate(csr, opts)).rejects.toMatchObject({
        code,
        details: expect.stringMatching(details) as unknown,
      });
      const res = await client.createCertificate((await makeCsr()).pem, {
        token: good(),
        impersonate: id('default', 'sleep'),
      });
      expect(res.cert_chain.length).toBeGreaterThanOrEqual(2);
    });
  });

  test('metrics carry istiod names and the CA is ready', async () => {
    const text = await h.metrics.metrics();
    for (const name of [
      'citadel_server_csr_count',
      'citadel_server_success_cert_issuance_count',
      'citadel_server_authentication_failure_count',
      'citadel_server_csr_parsing_err_count',
      'citadel_server_root_cert_expiry_timestamp',
      'citadel_server_cert_chain_expiry_timestamp',
      'citadel_server_node_authorization_denial_count',
    ]) {
      expect(text).toContain(`# TYPE ${name}`);
    }
    // An unknown id is never a label value (the caller chose it): the cluster label stays empty.
    expect(text).toMatch(/citadel_server_authentication_failure_count\{reason="unknown_cluster",cluster=""\} [1-9]/);
    expect(h.readiness.get('ca')).toBe(true);
  });

  test('/debug/ca shows the signer and roots but never the CA private key', async () => {
    const res = await h.debug.get('ca')!({ path: '/debug/ca', query: new URLSearchParams(), method: 'GET', body: '' });
    const text = JSON.stringify(res.body);
    expect(res.body).toMatchObject({ source: 'self-signed', signer: { subject: 'O=cluster.local' } });
    const keyPem = fs.readFileSync(path.join(h.stateDir, 'ca-key.pem'), 'utf8');
    const keyBody = keyPem.split('\n').slice(1, 3).join('');
    expect(text).not.toContain('PRIVATE KEY');
    expect(text).not.toContain(keyBody.slice(0, 40));
  });

  test('the CA key file is private to the owner (mode 0600)', () => {
    expect(fs.statSync(path.join(h.stateDir, 'ca-key.pem')).mode & 0o777).toBe(0o600);
  });

  test('the serving certificate names istiod services, localhost and loopback IPs in local mode', () => {
    const sans = peculiarSan(h.ctx.servingCerts.current().certChainPem);
    expect(sans.dns).toEqual(
      expect.arrayContaining([
        'istiod.istio-system.svc',
        'istiod-remote.istio-system.svc',
        'istio-pilot.istio-system.svc',
        'localhost',
      ]),
    );
    expect(sans.ips).toEqual(expect.arrayContaining(['127.0.0.1', '::1']));
  });
});
