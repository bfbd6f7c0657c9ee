// The upstream ztunnel and istio-cni charts, installed with their defaults, must find and trust
// istiod-ts as they find and trust istiod. Their side of the contract is written down here as
// facts from istio/istio manifests/charts/ztunnel/templates/daemonset.yaml and
// manifests/charts/istio-cni; our side is read from the rendered chart and from src.

import { parseServeOptions, SERVE_ENV } from '../../../src/config/options';
import { servingSans } from '../../../src/ca/serving-cert/serving-cert-issuer';
import { EXCLUDED_NAMESPACES, ROOT_CERT_KEY } from '../../../src/ca/roots/root-cert-publisher';
import { findObject, helmTemplate, type Rendered } from '../../support/helm';
import { deploymentOf, resolvedEnv, servicePorts } from './istiod-objects';

/** What the ztunnel chart sets by default. */
const ZTUNNEL = {
  namespace: 'istio-system',
  serviceAccount: 'ztunnel',
  /** CA_ADDRESS and XDS_ADDRESS: istiod[-<revision>].<istioNamespace>.svc:15012. */
  address: (revision: string, istioNamespace = 'istio-system') => `istiod${revision ? `-${revision}` : ''}.${istioNamespace}.svc:15012`,
  /** Volume istiod-ca-cert: ConfigMap istio-ca-root-cert, read as root-cert.pem. */
  rootConfigMap: 'istio-ca-root-cert',
  rootKey: 'root-cert.pem',
  /** Projected token audience. */
  tokenAudience: 'istio-ca',
  /** ISTIO_META_CLUSTER_ID default (multiCluster.clusterName). */
  clusterId: 'Kubernetes',
};

/** istio-cni enrolls pods by this label (pod, or namespace unless the pod opts out). */
const CNI_DATAPLANE_LABEL = 'istio.io/dataplane-mode';

function serveEnv(objects: readonly Rendered[]) {
  const c = deploymentOf(objects).container;
  return parseServeOptions(c.args.slice(1), resolvedEnv(c, ZTUNNEL.namespace)).env;
}

describe('upstream ztunnel chart defaults meet istiod-ts', () => {
  const objects = helmTemplate('istiod', { namespace: ZTUNNEL.namespace });
  const env = serveEnv(objects);

  test('CA_ADDRESS and XDS_ADDRESS name our Service and its 15012 port', () => {
    const [host, port] = ZTUNNEL.address('').split(':');
    const service = findObject(objects, 'Service');
    expect(`${service.metadata.name}.${service.metadata.namespace}.svc`).toBe(host);
    const xds = servicePorts(objects).find((p) => p.port === Number(port));
    expect(xds).toEqual({ name: 'https-dns', port: 15012, protocol: 'TCP' });
    // No targetPort: the Service forwards to 15012, where --secureGRPCAddr listens.
    expect(deploymentOf(objects).container.ports).toContainEqual({ name: 'tls-xds', containerPort: 15012, protocol: 'TCP' });
  });

  test("the serving certificate carries the host ztunnel verifies, the CA_ADDRESS host", () => {
    const sans = servingSans({ namespace: env.POD_NAMESPACE, revision: env.REVISION, customHosts: env.ISTIOD_CUSTOM_HOST, discoveryAddress: undefined, local: false });
    expect(sans).toContainEqual({ dns: ZTUNNEL.address('').split(':')[0] });
  });

  test('the root certificate lands in the ConfigMap and key ztunnel mounts, in its namespace', () => {
    expect(env.PILOT_CA_CERT_CONFIGMAP).toBe(ZTUNNEL.rootConfigMap);
    expect(SERVE_ENV.PILOT_CA_CERT_CONFIGMAP.default).toBe(ZTUNNEL.rootConfigMap);
    expect(ROOT_CERT_KEY).toBe(ZTUNNEL.rootKey);
    expect(EXCLUDED_NAMESPACES.has(ZTUNNEL.namespace)).toBe(false);
    expect(EXCLUDED_NAMESPACES.has('kube-system')).toBe(false);
  });

  test("ztunnel's token audience is accepted and its ServiceAccount may ask for its pods' certificates", () => {
    expect(env.TOKEN_AUDIENCES).toContain(ZTUNNEL.tokenAudience);
    expect(env.CA_TRUSTED_NODE_ACCOUNTS).toEqual([`${ZTUNNEL.namespace}/${ZTUNNEL.serviceAccount}`]);
  });

  test("ztunnel's cluster id is ours, so its clusterid metadata means the local cluster", () => {
    expect(env.CLUSTER_ID).toBe(ZTUNNEL.clusterId);
  });

  test('istio-cni leaves istiod-ts pods out of the mesh', () => {
    expect(deploymentOf(objects).podLabels[CNI_DATAPLANE_LABEL]).toBe('none');
  });

  test('a ztunnel installed with revision canary finds the canary istiod-ts', () => {
    const canary = helmTemplate('istiod', { namespace: ZTUNNEL.namespace, values: { revision: 'canary' } });
    const service = findObject(canary, 'Service');
    expect(`${service.metadata.name}.${service.metadata.namespace}.svc:15012`).toBe(ZTUNNEL.address('canary'));
    const canaryEnv = serveEnv(canary);
    const sans = servingSans({ namespace: canaryEnv.POD_NAMESPACE, revision: canaryEnv.REVISION, customHosts: [], discoveryAddress: undefined, local: false });
    expect(sans).toContainEqual({ dns: ZTUNNEL.address('canary').split(':')[0] });
  });
});
