import { LOCAL_MODE_HOST, parseServeOptions, serveHelp, SERVE_ENV, SERVE_FLAGS } from '../../../src/config/options';
import { UsageError } from '../../../src/config/settings';

describe('serve flags', () => {
  it('defaults follow istiod: every listener on its istiod port', () => {
    const o = parseServeOptions([], {});
    expect(o.flags.grpcAddr).toEqual({ host: '', port: 15010 });
    expect(o.flags.secureGRPCAddr).toEqual({ host: '', port: 15012 });
    expect(o.flags.httpsAddr).toEqual({ host: '', port: 15017 });
    expect(o.flags.monitoringAddr).toEqual({ host: '', port: 15014 });
    expect(o.flags.httpAddr).toEqual({ host: '', port: 8080 });
    expect(o.flags.meshConfig).toBe('./etc/istio/config/mesh');
    expect(o.flags.stateDir).toBe('./.istiod-ts');
    expect(o.flags.domain).toBe('cluster.local');
    expect(o.flags.keepaliveMaxServerConnectionAge).toBe(30 * 60 * 1000);
  });

  it('local mode binds loopback unless a listener flag is given; Kubernetes mode keeps every interface', () => {
    const local = parseServeOptions(
      ['--configDir', 'examples/demo', '--httpAddr', ':9090', '--monitoringAddr', ''],
      {},
    );
    expect(local.flags.grpcAddr).toEqual({ host: LOCAL_MODE_HOST, port: 15010 });
    expect(local.flags.secureGRPCAddr).toEqual({ host: LOCAL_MODE_HOST, port: 15012 });
    expect(local.flags.httpsAddr).toEqual({ host: LOCAL_MODE_HOST, port: 15017 });
    expect(local.flags.httpAddr).toEqual({ host: '', port: 9090 });
    expect(local.flags.monitoringAddr).toBeNull();
    expect(parseServeOptions([], {}).flags.grpcAddr).toEqual({ host: '', port: 15010 });
  });

  it('--configDir selects local mode, its absence Kubernetes mode', () => {
    expect(parseServeOptions(['--configDir', 'examples/demo'], {}).mode).toBe('local');
    expect(parseServeOptions([], {}).mode).toBe('kubernetes');
  });

  it('accepts --flag value, --flag=value and Go-style single dash', () => {
    const o = parseServeOptions(['--grpcAddr', '127.0.0.1:0', '--httpAddr=[::1]:9090', '-domain', 'example.org'], {});
    expect(o.flags.grpcAddr).toEqual({ host: '127.0.0.1', port: 0 });
    expect(o.flags.httpAddr).toEqual({ host: '::1', port: 9090 });
    expect(o.flags.domain).toBe('example.org');
    expect(o.given.has('grpcAddr')).toBe(true);
    expect(o.given.has('httpsAddr')).toBe(false);
  });

  it('an empty address disables that listener', () => {
    expect(parseServeOptions(['--grpcAddr='], {}).flags.grpcAddr).toBeNull();
  });

  it.each([
    [['--nope'], 'unknown flag: --nope'],
    [['--grpcAddr', '15010'], 'invalid value for --grpcAddr'],
    [['--grpcAddr', ':99999'], 'port 99999 is above 65535'],
    [['--httpAddr', ':http'], 'port "http" is not a number'],
    [['--keepaliveMaxServerConnectionAge', '30'], 'invalid value for --keepaliveMaxServerConnectionAge'],
    [['--keepaliveMaxServerConnectionAge', '0s'], 'must be greater than 0'],
    [['--configDir'], 'flag --configDir needs a value'],
    [['extra'], 'unexpected argument: extra'],
  ])('%j is a usage error naming the problem', (argv, message) => {
    expect(() => parseServeOptions(argv, {})).toThrow(UsageError);
    expect(() => parseServeOptions(argv, {})).toThrow(message);
  });
});

describe('serve environment', () => {
  it('defaults as istiod reads them', () => {
    const { env } = parseServeOptions([], {});
    expect(env.POD_NAMESPACE).toBe('istio-system');
    expect(env.REVISION).toBe('default');
    expect(env.CLUSTER_ID).toBe('Kubernetes');
    expect(env.DEFAULT_WORKLOAD_CERT_TTL).toBe(24 * 3600 * 1000);
    expect(env.MAX_WORKLOAD_CERT_TTL).toBe(90 * 24 * 3600 * 1000);
    expect(env.TOKEN_AUDIENCES).toEqual(['istio-ca']);
    expect(env.PILOT_DEBOUNCE_AFTER).toBe(100);
  });

  it('CA_TRUSTED_NODE_ACCOUNTS defaults to the ztunnel account of POD_NAMESPACE', () => {
    expect(parseServeOptions([], { POD_NAMESPACE: 'mesh' }).env.CA_TRUSTED_NODE_ACCOUNTS).toEqual(['mesh/ztunnel']);
  });

  it('CA_TRUSTED_NODE_ACCOUNTS set empty disables impersonation', () => {
    expect(parseServeOptions([], { CA_TRUSTED_NODE_ACCOUNTS: '' }).env.CA_TRUSTED_NODE_ACCOUNTS).toEqual([]);
  });

  it('values from the environment override defaults', () => {
    const { env } = parseServeOptions([], { POD_NAMESPACE: 'istio-x', PILOT_DEBOUNCE_AFTER: '1s', XDS_AUTH: 'false' });
    expect(env.POD_NAMESPACE).toBe('istio-x');
    expect(env.PILOT_DEBOUNCE_AFTER).toBe(1000);
    expect(env.XDS_AUTH).toBe(false);
  });

  it.each([
    [{ CITADEL_SELF_SIGNED_CA_RSA_KEY_SIZE: '1024' }, 'env CITADEL_SELF_SIGNED_CA_RSA_KEY_SIZE: must be at least 2048'],
    [{ XDS_AUTH: 'maybe' }, 'env XDS_AUTH: "maybe" is not a boolean'],
    [{ DEFAULT_WORKLOAD_CERT_TTL: '1 day' }, 'env DEFAULT_WORKLOAD_CERT_TTL'],
    [{ CITADEL_SELF_SIGNED_CA_KEY_TYPE: 'DSA' }, 'must be RSA or ECDSA'],
  ])('bad env %j is a usage error naming the variable', (env, message) => {
    expect(() => parseServeOptions([], env)).toThrow(message);
  });
});

describe('--help', () => {
  it('lists every flag and env var with its default', () => {
    const help = serveHelp();
    for (const [name, spec] of Object.entries(SERVE_FLAGS)) {
      expect(help).toContain(`--${name}`);
      if (spec.default !== '') expect(help).toContain(`(default ${JSON.stringify(spec.default)})`);
    }
    for (const name of Object.keys(SERVE_ENV)) expect(help).toContain(name);
  });
});
