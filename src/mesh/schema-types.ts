// The building blocks of the meshConfig schema (schema.ts): field kinds, constructors, and the
// messages several parts share (client TLS settings, connection pools, label selectors).

/** A proto enum: its full name (for messages, as istiod words them) and its values. */
export interface EnumSpec {
  name: string;
  values: Readonly<Record<string, number>>;
}

export type Field =
  | 'string'
  | 'bool'
  | 'int'
  | 'uint'
  | 'double'
  | 'duration'
  | 'strings'
  | 'stringMap'
  /** A message this server does not model field by field: a mapping, not walked. */
  | 'any'
  | { enum: EnumSpec }
  | { enumList: EnumSpec }
  | { message: MessageSpec }
  | { list: MessageSpec };

export interface MessageSpec {
  /** Full proto name, for the unknown-field warning. */
  name: string;
  fields: Readonly<Record<string, Field>>;
}

export const enumOf = (name: string, ...names: (string | [string, number])[]): EnumSpec => ({
  name,
  values: Object.fromEntries(names.map((n, i) => (typeof n === 'string' ? [n, i] : n))),
});
export const msg = (name: string, fields: Record<string, Field>): MessageSpec => ({ name, fields });
export const e = (spec: EnumSpec): Field => ({ enum: spec });
export const m = (spec: MessageSpec): Field => ({ message: spec });
export const list = (spec: MessageSpec): Field => ({ list: spec });

export const MESH = 'istio.mesh.v1alpha1';
export const EP = `${MESH}.MeshConfig.ExtensionProvider`;

export const TLS_MODE = enumOf(
  'istio.networking.v1alpha3.ClientTLSSettings.TLSmode',
  'DISABLE',
  'SIMPLE',
  'MUTUAL',
  'ISTIO_MUTUAL',
);
export const CLIENT_TLS = msg('istio.networking.v1alpha3.ClientTLSSettings', {
  mode: e(TLS_MODE),
  clientCertificate: 'string',
  privateKey: 'string',
  caCertificates: 'string',
  credentialName: 'string',
  subjectAltNames: 'strings',
  sni: 'string',
  insecureSkipVerify: 'bool',
  caCrl: 'string',
});
export const CONNECTION_POOL = msg('istio.networking.v1alpha3.ConnectionPoolSettings', {
  tcp: 'any',
  http: m(
    msg('istio.networking.v1alpha3.ConnectionPoolSettings.HTTPSettings', {
      http1MaxPendingRequests: 'int',
      http2MaxRequests: 'int',
      maxRequestsPerConnection: 'int',
      maxRetries: 'int',
      idleTimeout: 'duration',
      h2UpgradePolicy: e(
        enumOf(
          'istio.networking.v1alpha3.ConnectionPoolSettings.HTTPSettings.H2UpgradePolicy',
          'DEFAULT',
          'DO_NOT_UPGRADE',
          'UPGRADE',
        ),
      ),
      useClientProtocol: 'bool',
      maxConcurrentStreams: 'int',
    }),
  ),
});

/** metav1-style label selector as meshConfig spells it (discoverySelectors, serviceScopeConfigs). */
export const LABEL_SELECTOR = msg(`${MESH}.LabelSelector`, {
  matchLabels: 'stringMap',
  matchExpressions: list(
    msg(`${MESH}.LabelSelectorRequirement`, { key: 'string', operator: 'string', values: 'strings' }),
  ),
});

export const TRACE_CONTEXT = enumOf(
  'TraceContext',
  'UNSPECIFIED',
  'W3C_TRACE_CONTEXT',
  'GRPC_BIN',
  'CLOUD_TRACE_CONTEXT',
  'B3',
);
export const serviceAndPort = { service: 'string', port: 'uint' } as const;
