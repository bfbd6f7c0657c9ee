// /debug/mesh in istiod's JSON: proto3 zero values left out, set messages and wrapper fields kept.

import { defaultMeshConfig } from '../../../src/mesh/defaults';
import type { MeshConfig } from '../../../src/mesh/types';
import { meshConfigJson } from '../../../src/server/debug-mesh';

test("the built-in meshConfig shows only what istiod's JSON shows: zero strings, bools and empty lists left out", () => {
  const json = meshConfigJson(defaultMeshConfig());
  for (const absent of [
    'accessLogFile',
    'accessLogFormat',
    'accessLogEncoding', // TEXT is the enum's zero value
    'enableEnvoyAccessLogService',
    'trustDomainAliases',
    'certificates',
    'serviceSettings',
  ])
    expect(json).not.toHaveProperty(absent);
  expect(json).toMatchObject({
    trustDomain: 'cluster.local',
    rootNamespace: 'istio-system',
    ingressControllerMode: 'STRICT',
    outboundTrafficPolicy: { mode: 'ALLOW_ANY' },
    protocolDetectionTimeout: '0s',
    enableAutoMtls: true,
  });
  // A set message stays even when all its fields are zero (PASSTHROUGH is InboundTrafficPolicy's zero mode).
  expect(json['inboundTrafficPolicy']).toEqual({});
  expect(json['thriftConfig']).toEqual({});
});

test('a wrapper-typed field set to false or 0 stays: it is a set value', () => {
  const mesh: MeshConfig = {
    ...defaultMeshConfig(),
    enableAutoMtls: false,
    enablePrometheusMerge: false,
    defaultConfig: { concurrency: 0, holdApplicationUntilProxyStarts: false, statusPort: 0 },
  };
  const json = meshConfigJson(mesh);
  expect(json).toMatchObject({ enableAutoMtls: false, enablePrometheusMerge: false });
  expect(json['defaultConfig']).toEqual({ concurrency: 0, holdApplicationUntilProxyStarts: false });
});

test('fields the schema does not know are shown as read, and messages in lists are walked', () => {
  const mesh: MeshConfig = {
    ...defaultMeshConfig(),
    someFutureField: '',
    extensionProviders: [{ name: 'p', envoyFileAccessLog: { path: '' } }],
  };
  const json = meshConfigJson(mesh);
  expect(json['someFutureField']).toBe('');
  expect(json['extensionProviders']).toEqual([{ name: 'p', envoyFileAccessLog: {} }]);
});
