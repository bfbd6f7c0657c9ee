import { describeKind, InvalidCase, ValidCase } from './table';

const withSelector = { selector: { matchLabels: { app: 'db' } } };

const valid: ValidCase[] = [
  ['a namespace-wide STRICT policy', { mtls: { mode: 'STRICT' } }],
  ['an empty spec', {}],
  ['port-level mTLS with a selector', { ...withSelector, portLevelMtls: { '8080': { mode: 'DISABLE' } } }],
  ['port 65535', { ...withSelector, portLevelMtls: { '65535': { mode: 'PERMISSIVE' } } }],
  ['mode by number', { mtls: { mode: 3 } }],
  ['an empty portLevelMtls map decodes to unset', { portLevelMtls: {} }],
  ['a selector without labels warns', { selector: {} }, 'workload selector specified without labels'],
];

const invalid: InvalidCase[] = [
  [
    'port-level mTLS without a selector',
    { portLevelMtls: { '8080': { mode: 'DISABLE' } } },
    'spec.portLevelMtls: mesh/namespace peer authentication cannot have port level mTLS',
  ],
  [
    'port-level mTLS with a selector without labels',
    { selector: { matchLabels: {} }, portLevelMtls: { '80': { mode: 'STRICT' } } },
    'cannot have port level mTLS',
  ],
  [
    'port 0',
    { ...withSelector, portLevelMtls: { '0': { mode: 'DISABLE' } } },
    'spec.portLevelMtls["0"]: port must be in range 1..65535',
  ],
  [
    'port 65536',
    { ...withSelector, portLevelMtls: { '65536': { mode: 'DISABLE' } } },
    'port must be in range 1..65535',
  ],
  [
    'a non-numeric port key',
    { ...withSelector, portLevelMtls: { http: { mode: 'DISABLE' } } },
    'port must be in range 1..65535',
  ],
  ['an unknown mode', { mtls: { mode: 'ON' } }, 'spec.mtls.mode: unknown value "ON"'],
  [
    'an unknown port-level mode',
    { ...withSelector, portLevelMtls: { '80': { mode: 'SOMETIMES' } } },
    'spec.portLevelMtls["80"].mode: unknown value',
  ],
  ['a wildcard selector', { selector: { matchLabels: { app: 'a*' } } }, 'wildcard is not supported in selector'],
  ['an empty selector key', { selector: { matchLabels: { '': 'x' } } }, 'empty key is not supported in selector'],
  ['mtls that is not an object', { mtls: 'STRICT' }, 'spec.mtls: must be an object'],
  [
    'dry-run annotation',
    {},
    'has unsupported annotation istio.io/dry-run',
    { annotations: { 'istio.io/dry-run': 'true' } },
  ],
  [
    'the always-reject annotation',
    {},
    '"internal.istio.io/webhook-always-reject" annotation found, rejecting',
    { annotations: { 'internal.istio.io/webhook-always-reject': 'true' } },
  ],
  [
    'the parent-namespace annotation',
    {},
    '"internal.istio.io/parent-namespace" annotation found, this may not be set by users',
    { annotations: { 'internal.istio.io/parent-namespace': 'x' } },
  ],
  [
    'the parents annotation',
    {},
    '"internal.istio.io/parents" annotation found',
    { annotations: { 'internal.istio.io/parents': 'x' } },
  ],
  [
    'matchLabels values of the wrong type',
    { selector: { matchLabels: { app: 1 } } },
    'spec.selector.matchLabels["app"]: must be a string',
  ],
];

describeKind('PeerAuthentication', valid, invalid);
