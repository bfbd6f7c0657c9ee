import { applyMeshLayer } from '../../../src/mesh/build';
import { defaultMeshConfig } from '../../../src/mesh/defaults';
import { MAX_MESH_CONFIG_BYTES, MeshConfigError, parseMeshConfig } from '../../../src/mesh/parse';
import {
  CONNECT_TIMEOUT_MAX_MS,
  proxyAddressProblem,
  trustDomainProblem,
  validateMeshConfig,
} from '../../../src/mesh/validate';
import type { MeshConfigIssue } from '../../../src/mesh/types';

function issuesOf(text: string): MeshConfigIssue[] {
  try {
    applyMeshLayer(defaultMeshConfig(), { source: 'mesh', text });
  } catch (err) {
    if (err instanceof MeshConfigError) return [...err.issues];
    throw err;
  }
  return [];
}

describe('parseMeshConfig', () => {
  test('reads YAML and JSON', () => {
    expect(parseMeshConfig('trustDomain: example.org\n', 'f')).toEqual({ trustDomain: 'example.org' });
    expect(parseMeshConfig('{"rootNamespace": "root"}', 'f')).toEqual({ rootNamespace: 'root' });
  });

  test('unknown fields are accepted and kept, as istiod tolerates them', () => {
    expect(parseMeshConfig('someFutureField: {a: 1}\n', 'f')).toEqual({ someFutureField: { a: 1 } });
  });

  test('a YAML syntax error names the line', () => {
    expect(() => parseMeshConfig('trustDomain: a\ndefaultConfig: [\n', 'mesh.yaml')).toThrow(/^mesh\.yaml: line \d+: /);
  });

  test('a document that is not a mapping is refused', () => {
    expect(() => parseMeshConfig('- a\n', 'f')).toThrow('f: expected a mapping of meshConfig fields, got a list');
  });

  test.each([
    ['trustDomain: 5', 'trustDomain', 'expected a string, got number 5'],
    ['trustDomainAliases: a.example', 'trustDomainAliases', 'expected a list of strings, got string "a.example"'],
    ['enableAutoMtls: "yes"', 'enableAutoMtls', 'expected true or false, got string "yes"'],
    [
      'connectTimeout: soon',
      'connectTimeout',
      'invalid duration "soon": expected a number and a unit (ns, us, ms, s, m, h), e.g. "10s" or "1h30m"',
    ],
    [
      'defaultConfig: {proxyMetadata: {ISTIO_META_ENABLE_HBONE: true}}',
      'defaultConfig.proxyMetadata.ISTIO_META_ENABLE_HBONE',
      'expected a string (quote values like "true"), got boolean true',
    ],
    // A quoted integer is an integer to istiod's decoder (see validation-rules.test.ts); a word is not.
    ['defaultConfig: {statusPort: "http"}', 'defaultConfig.statusPort', 'expected an integer, got string "http"'],
    [
      'discoverySelectors: [{matchExpressions: [{key: a, operator: Maybe}]}]',
      'discoverySelectors[0].matchExpressions[0].operator',
      'must be one of In, NotIn, Exists, DoesNotExist, got string "Maybe"',
    ],
    ['caCertificates: [{pem: [x]}]', 'caCertificates[0].pem', 'expected a string, got a list'],
  ])('a known field with the wrong type is an error naming it: %s', (text, field, message) => {
    expect(issuesOf(text)).toEqual([{ field, message }]);
  });

  test(`a meshConfig larger than MAX_MESH_CONFIG_BYTES (${MAX_MESH_CONFIG_BYTES}) is refused`, () => {
    expect(() => parseMeshConfig(`# ${'x'.repeat(MAX_MESH_CONFIG_BYTES)}`, 'f')).toThrow(
      `larger than ${MAX_MESH_CONFIG_BYTES} bytes`,
    );
  });
});

describe('validateMeshConfig (istiod ValidateMeshConfig)', () => {
  test('the defaults are valid', () => {
    expect(validateMeshConfig(defaultMeshConfig())).toEqual([]);
  });

  test('trustDomain must be DNS-1123 labels joined by dots', () => {
    expect(trustDomainProblem('cluster.local')).toBeUndefined();
    expect(trustDomainProblem('istio.io.')).toBeUndefined();
    expect(trustDomainProblem('')).toBe('empty domain name not allowed');
    expect(trustDomainProblem('Upper.case')).toMatch(/label "Upper"/);
    expect(trustDomainProblem('a..b')).toMatch(/label ""/);
    expect(trustDomainProblem('under_score.io')).toMatch(/label "under_score"/);
    expect(trustDomainProblem(`${'a'.repeat(64)}.io`)).toMatch(/not a lowercase DNS-1123 label/);
  });

  test('each bad trust domain alias is reported with its index', () => {
    expect(issuesOf('trustDomainAliases: [a.example, "z bad"]')).toEqual([
      {
        field: 'trustDomainAliases[1]',
        message: 'trust domain name "z bad" invalid: label "z bad" is not a lowercase DNS-1123 label',
      },
    ]);
  });

  test('defaultConfig.discoveryAddress must be present and host:port', () => {
    expect(issuesOf('defaultConfig: {discoveryAddress: ""}')).toEqual([
      {
        field: 'defaultConfig.discoveryAddress',
        message: 'must be set to the address of the discovery service (host:port)',
      },
    ]);
    expect(issuesOf('defaultConfig: {discoveryAddress: istiod.istio-system.svc}')[0]?.field).toBe(
      'defaultConfig.discoveryAddress',
    );
    expect(proxyAddressProblem('istiod.istio-system.svc:15012')).toBeUndefined();
    expect(proxyAddressProblem('10.0.0.1:15012')).toBeUndefined();
    expect(proxyAddressProblem('[fd00::1]:15012')).toBeUndefined();
    expect(proxyAddressProblem('istiod:0')).toBe('port 0 must be in the range 1..65535');
    expect(proxyAddressProblem('istiod:http')).toBe('port "http" is not a number');
    expect(proxyAddressProblem('bad_host:15012')).toBe('"bad_host" is not a valid hostname or IP address');
  });

  test('proxy ports must be in 1..65535', () => {
    expect(issuesOf('proxyListenPort: 70000').map((i) => i.field)).toEqual(['proxyListenPort']);
    expect(issuesOf('defaultConfig: {proxyAdminPort: 0}').map((i) => i.field)).toEqual([
      'defaultConfig.proxyAdminPort',
    ]);
  });

  test(`connectTimeout must be between 1ms and ${CONNECT_TIMEOUT_MAX_MS / 3_600_000}h`, () => {
    expect(issuesOf('connectTimeout: 0s').map((i) => i.field)).toEqual(['connectTimeout']);
    expect(issuesOf('connectTimeout: 2h').map((i) => i.field)).toEqual(['connectTimeout']);
    expect(issuesOf('connectTimeout: 1h')).toEqual([]);
  });

  test('drainDuration must be whole seconds; configPath, binaryPath and serviceCluster are required', () => {
    expect(issuesOf('defaultConfig: {drainDuration: 1500ms}').map((i) => i.field)).toEqual([
      'defaultConfig.drainDuration',
    ]);
    expect(issuesOf('defaultConfig: {configPath: "", binaryPath: ""}').map((i) => i.field)).toEqual([
      'defaultConfig.configPath',
      'defaultConfig.binaryPath',
    ]);
    expect(issuesOf('defaultConfig: {serviceCluster: ""}').map((i) => i.field)).toEqual([
      'defaultConfig.serviceCluster',
    ]);
  });

  test('controlPlaneAuthPolicy must be NONE or MUTUAL_TLS', () => {
    expect(issuesOf('defaultConfig: {controlPlaneAuthPolicy: SOMETIMES}').map((i) => i.field)).toEqual([
      'defaultConfig.controlPlaneAuthPolicy',
    ]);
  });

  test('meshMTLS.ecdhCurves is not allowed', () => {
    expect(issuesOf('meshMTLS: {ecdhCurves: [P-256]}')).toEqual([
      { field: 'meshMTLS.ecdhCurves', message: 'mesh TLS does not support ECDH curves configuration' },
    ]);
  });

  test('the ambient profile meshConfig is valid', () => {
    const ambient = `
trustDomain: cluster.local
rootNamespace: istio-system
defaultConfig:
  discoveryAddress: istiod.istio-system.svc:15012
  proxyMetadata:
    ISTIO_META_ENABLE_HBONE: "true"
serviceScopeConfigs:
  - servicesSelector:
      matchExpressions:
        - key: istio.io/global
          operator: In
          values: ["true"]
    scope: GLOBAL
`;
    expect(issuesOf(ambient)).toEqual([]);
  });
});
