// istioctl's contract over State-of-the-World ADS: istio.io/debug/syncz answered with one CSDS
// ClientConfig per connected ztunnel and the control_plane identifier, only to callers
// authenticated over TLS, scoped to the caller's namespace outside the system namespace; every
// other SotW type refused. The client is generated from proto/xds.proto and proto/csds.proto.

import * as grpc from '@grpc/grpc-js';
import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call';
import { ztunnelNodeId } from '../../../src/cli/ads-client';
import type { CallAuthenticator, CallerIdentity } from '../../../src/security/identity';
import { adsServiceDefinition } from '../../../src/xds/grpc/proto';
import { MAX_SOTW_STREAMS, UNAUTHENTICATED_MESSAGE } from '../../../src/xds/debug/sotw-stream';
import { controlPlaneIdentifier } from '../../../src/xds/debug/sotw-syncz';
import { MAX_SOTW_RESOURCE_NAMES } from '../../../src/xds/wire/sotw-wire';
import { demoCache } from '../../support/xds/fake-cache';
import { ClientConfig, DebugClient, GenericXdsConfig } from './fixtures/debug-client';
import { Harness, startHarness } from './fixtures/harness';
import {
  ADDRESS_TYPE_URL,
  AUTHORIZATION_TYPE_URL,
  RESPONSE_WAIT_MS,
  TestZtunnel,
  ofType,
} from './fixtures/test-client';

/** Bearer "<namespace>-token" is a caller of that namespace (service account "default"). */
class NamespaceTokens implements CallAuthenticator {
  authenticate(call: ServerSurfaceCall): Promise<CallerIdentity> {
    const header = call.metadata.get('authorization')[0];
    const m = typeof header === 'string' ? /^Bearer ([a-z-]+)-token$/.exec(header) : null;
    if (!m?.[1]) return Promise.reject(new Error(header ? 'token rejected' : 'no authorization header'));
    const namespace = m[1];
    return Promise.resolve({
      identities: [`spiffe://cluster.local/ns/${namespace}/sa/default`],
      namespace,
      serviceAccount: 'default',
      via: 'token',
    });
  }
}

const CONTROL_PLANE = controlPlaneIdentifier('istiod-7d4f-abcde', { version: '1.28.0-ts', runtime: 'v20.0.0' });

let harness: Harness;
const ztunnels: TestZtunnel[] = [];
const debugClients: DebugClient[] = [];

function ztunnel(opts: ConstructorParameters<typeof TestZtunnel>[1] = {}): TestZtunnel {
  const namespace = opts.namespace ?? 'istio-system';
  const z = new TestZtunnel(harness, { token: `${namespace}-token`, ...opts });
  ztunnels.push(z);
  return z;
}

/** A debug client; `token` null sends no credentials. */
function istioctl(token: string | null = 'istio-system-token', port = harness.port, tls = true): DebugClient {
  const c = new DebugClient({
    port,
    ...(tls ? { caPem: harness.pki.caPem } : {}),
    ...(token !== null ? { token } : {}),
  });
  debugClients.push(c);
  return c;
}

/** The node id TestZtunnel sends for a namespace (ztunnelNodeId of its fixed pod and IP). */
const nodeIdOf = (namespace: string) => ztunnelNodeId('10.0.0.100', 'ztunnel-abc', namespace);
/** How istiod names that proxy in syncz (ClientConfig node id, /debug/syncz proxy): pod.namespace. */
const proxyIdOf = (namespace: string) => `ztunnel-abc.${namespace}`;

function typeConfig(c: ClientConfig | undefined, typeUrl: string): GenericXdsConfig | undefined {
  return c?.generic_xds_configs.find((g) => g.type_url === typeUrl);
}

/** Asks syncz until the node's config for `typeUrl` has `status` (the ACK travels after the response). */
async function synczUntil(nodeId: string, typeUrl: string, status: string): Promise<ClientConfig> {
  const deadline = Date.now() + RESPONSE_WAIT_MS;
  for (;;) {
    const { configs } = await istioctl().syncz();
    const mine = configs.find((c) => c.node.id === nodeId.split('~')[2]);
    if (typeConfig(mine, typeUrl)?.config_status === status && mine) return mine;
    if (Date.now() > deadline) throw new Error(`${nodeId} ${typeUrl} never ${status}: ${JSON.stringify(mine)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeEach(async () => {
  harness = await startHarness(demoCache(), { debug: { controlPlane: CONTROL_PLANE } }, new NamespaceTokens());
});

afterEach(async () => {
  for (const z of ztunnels.splice(0)) z.close();
  for (const c of debugClients.splice(0)) c.close();
  await harness.close();
});

describe('istio.io/debug/syncz', () => {
  test('one ClientConfig per ztunnel: node id, CLUSTER_ID/NAMESPACE/ISTIO_VERSION, SYNCED per type after the ACK', async () => {
    const z = ztunnel({ metadata: { ISTIO_VERSION: '1.28.0' } });
    await z.next(ofType(AUTHORIZATION_TYPE_URL));
    const nodeId = nodeIdOf('istio-system');
    const config = await synczUntil(nodeId, AUTHORIZATION_TYPE_URL, 'SYNCED');
    const metadata = Object.entries(config.node.metadata.fields).map(([k, v]) => [k, v.stringValue]);
    expect(Object.fromEntries(metadata)).toEqual({
      CLUSTER_ID: 'Kubernetes',
      NAMESPACE: 'istio-system',
      ISTIO_VERSION: '1.28.0',
    });
    const address = typeConfig(await synczUntil(nodeId, ADDRESS_TYPE_URL, 'SYNCED'), ADDRESS_TYPE_URL);
    expect(address?.last_updated?.seconds).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(address?.error_state).toBeNull();
    // Sorted by type URL, as istiod lists them.
    const types = config.generic_xds_configs.map((g) => g.type_url);
    expect(types).toEqual([...types].sort());
  });

  test('a response not ACKed yet is STALE; a NACK is ERROR with its details until an ACK follows', async () => {
    const z = ztunnel({ manualAck: true });
    const nodeId = nodeIdOf('istio-system');
    const address = await z.next(ofType(ADDRESS_TYPE_URL));
    const authz = await z.next(ofType(AUTHORIZATION_TYPE_URL));
    let config = await synczUntil(nodeId, ADDRESS_TYPE_URL, 'STALE');
    expect(typeConfig(config, AUTHORIZATION_TYPE_URL)?.config_status).toBe('STALE');

    z.client.ack(address, 'address rejected: bad CIDR');
    config = await synczUntil(nodeId, ADDRESS_TYPE_URL, 'ERROR');
    expect(typeConfig(config, ADDRESS_TYPE_URL)?.error_state?.details).toBe('address rejected: bad CIDR');
    expect(typeConfig(config, ADDRESS_TYPE_URL)?.error_state?.last_update_attempt?.seconds).toBeGreaterThan(0);

    z.client.ack(authz);
    config = await synczUntil(nodeId, AUTHORIZATION_TYPE_URL, 'SYNCED');
    expect(typeConfig(config, ADDRESS_TYPE_URL)?.config_status).toBe('ERROR');
  });

  test('a type the ztunnel never asked for is not listed (NOT_SENT of a type asked and not answered: test/unit/xds/sotw-syncz)', async () => {
    const z = ztunnel();
    await z.next(ofType(AUTHORIZATION_TYPE_URL));
    const config = await synczUntil(nodeIdOf('istio-system'), ADDRESS_TYPE_URL, 'SYNCED');
    expect(typeConfig(config, 'type.googleapis.com/envoy.config.cluster.v3.Cluster')).toBeUndefined();
  });

  test("every response carries istiod's control_plane identifier, which names this control plane and its version", async () => {
    const { response } = await istioctl().syncz();
    const id = JSON.parse(response.control_plane?.identifier ?? '{}') as Record<string, unknown>;
    expect(id).toEqual({
      Component: 'istiod',
      ID: 'istiod-7d4f-abcde',
      Info: { version: '1.28.0-ts', revision: 'unknown', golang_version: 'v20.0.0', status: 'Clean', tag: '1.28.0-ts' },
    });
    const dump = await istioctl().request({ type_url: 'istio.io/debug/config_dump', resource_names: ['x'] });
    expect(dump.control_plane?.identifier).toBe(CONTROL_PLANE);
    expect(response.type_url).toBe('istio.io/debug/syncz');
    expect(response.nonce).not.toBe('');
  });

  test('a caller outside the system namespace sees only the proxies of its own namespace', async () => {
    const system = ztunnel();
    const app = ztunnel({ namespace: 'app' });
    await system.next(ofType(AUTHORIZATION_TYPE_URL));
    await app.next(ofType(AUTHORIZATION_TYPE_URL));
    await synczUntil(nodeIdOf('app'), AUTHORIZATION_TYPE_URL, 'SYNCED');

    const all = await istioctl('istio-system-token').syncz();
    expect(all.configs.map((c) => c.node.id).sort()).toEqual([proxyIdOf('istio-system'), proxyIdOf('app')].sort());
    const own = await istioctl('app-token').syncz();
    expect(own.configs.map((c) => c.node.id)).toEqual([proxyIdOf('app')]);
    const other = await istioctl('other-token').syncz();
    expect(other.configs).toEqual([]);
  });
});

describe('authentication', () => {
  test('no credentials: UNAUTHENTICATED with an opaque message', async () => {
    await expect(istioctl(null).syncz()).rejects.toMatchObject({
      code: grpc.status.UNAUTHENTICATED,
      details: UNAUTHENTICATED_MESSAGE,
    });
    await expect(istioctl('Bad_Token').syncz()).rejects.toMatchObject({
      code: grpc.status.UNAUTHENTICATED,
      details: UNAUTHENTICATED_MESSAGE,
    });
  });

  test('the plaintext port answers no debug type, even to a valid token', async () => {
    const plain = new grpc.Server();
    plain.addService(adsServiceDefinition(), harness.xds.implementation('plaintext'));
    const port = await new Promise<number>((resolve, reject) =>
      plain.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    try {
      await expect(istioctl('istio-system-token', port, false).syncz()).rejects.toMatchObject({
        code: grpc.status.UNAUTHENTICATED,
        details: UNAUTHENTICATED_MESSAGE,
      });
    } finally {
      plain.forceShutdown();
    }
  });
});

describe('what else State of the World answers', () => {
  test('a non-debug type is refused with INVALID_ARGUMENT naming Delta xDS', async () => {
    const err = istioctl().request({ type_url: 'type.googleapis.com/envoy.config.cluster.v3.Cluster' });
    await expect(err).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    await expect(err).rejects.toThrow(/ztunnel uses Delta xDS/);
  });

  test('istio.io/debug/config_dump is answered empty (ztunnel serves its own config dump)', async () => {
    const r = await istioctl().request({
      type_url: 'istio.io/debug/config_dump',
      resource_names: ['ztunnel-abc.istio-system'],
    });
    expect(r.resources).toEqual([]);
    expect(r.type_url).toBe('istio.io/debug/config_dump');
  });

  test('istio.io/debug needs exactly one resource name, as istiod', async () => {
    await expect(istioctl().request({ type_url: 'istio.io/debug' })).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: 'exactly one debug request is required',
    });
  });

  test(`more than MAX_SOTW_RESOURCE_NAMES (${MAX_SOTW_RESOURCE_NAMES}) names in a request is INVALID_ARGUMENT naming the limit`, async () => {
    const names = Array.from({ length: MAX_SOTW_RESOURCE_NAMES + 1 }, (_, i) => `n${i}`);
    await expect(istioctl().request({ type_url: 'istio.io/debug/syncz', resource_names: names })).rejects.toThrow(
      /MAX_SOTW_RESOURCE_NAMES/,
    );
    await expect(
      istioctl().request({ type_url: 'istio.io/debug/syncz', resource_names: names.slice(1) }),
    ).resolves.toMatchObject({ type_url: 'istio.io/debug/syncz' });
  });

  test(`at most MAX_SOTW_STREAMS (${MAX_SOTW_STREAMS}) SotW streams at once; the next is RESOURCE_EXHAUSTED`, async () => {
    const client = istioctl();
    const open = Array.from({ length: MAX_SOTW_STREAMS }, () => client.open());
    for (const s of open) s.on('error', () => undefined);
    // Every open stream is registered once the server has seen it; poll its count.
    const deadline = Date.now() + RESPONSE_WAIT_MS;
    while (harness.xds.sotwStreamCount() < MAX_SOTW_STREAMS && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    expect(harness.xds.sotwStreamCount()).toBe(MAX_SOTW_STREAMS);
    await expect(client.syncz()).rejects.toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
    open[0]!.cancel();
    while (harness.xds.sotwStreamCount() >= MAX_SOTW_STREAMS && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    await expect(client.syncz()).resolves.toMatchObject({ configs: [] });
    for (const s of open) s.cancel();
  });
});

describe('HTTP /debug/syncz', () => {
  test("istiod's shape: one object per proxy with its cluster, type, version and per-type sent/acked nonces", async () => {
    const z = ztunnel({ metadata: { ISTIO_VERSION: '1.28.0' }, manualAck: true });
    const address = await z.next(ofType(ADDRESS_TYPE_URL));
    await z.next(ofType(AUTHORIZATION_TYPE_URL));
    z.client.ack(address);
    await synczUntil(nodeIdOf('istio-system'), ADDRESS_TYPE_URL, 'SYNCED');
    const body = harness.xds.debugSyncStatus();
    expect(body).toEqual([
      {
        cluster_id: 'Kubernetes',
        proxy: proxyIdOf('istio-system'),
        proxy_type: 'ztunnel',
        istio_version: '1.28.0',
        resources: {
          [ADDRESS_TYPE_URL]: {
            sent: address.nonce,
            acked: address.nonce,
            sentTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown,
            status: 'SYNCED',
          },
          [AUTHORIZATION_TYPE_URL]: {
            sent: expect.any(String) as unknown,
            sentTime: expect.any(String) as unknown,
            status: 'STALE',
          },
        },
      },
    ]);
    expect(harness.xds.debugSyncStatus('istio-system')).toHaveLength(1);
    expect(harness.xds.debugSyncStatus('app')).toEqual([]);
  });
});
