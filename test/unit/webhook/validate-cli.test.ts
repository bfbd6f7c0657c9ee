import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runValidateCommand } from '../../../src/cli/validate';

const VALID = `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata:
  name: allow-web
  namespace: web
spec:
  rules:
  - from:
    - source:
        principals: ["cluster.local/ns/web/sa/frontend"]
`;

const INVALID = `apiVersion: networking.istio.io/v1
kind: Gateway
metadata:
  name: gw
spec:
  servers:
  - port: {number: 80, protocol: HTTP}
    hosts: ["app"]
`;

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {}
`;

function tmp(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'validate-cli-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

async function run(argv: string[], stdin = '') {
  let out = '';
  let err = '';
  const code = await runValidateCommand(
    argv,
    (s) => (out += s),
    (s) => (err += s),
    () => stdin,
  );
  return { code, out, err };
}

describe('istiod-ts validate', () => {
  test('valid files exit 0', async () => {
    const dir = tmp({ 'a.yaml': VALID });
    const r = await run(['-f', path.join(dir, 'a.yaml')]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('1 object(s) checked, 0 invalid');
  });

  test('an invalid object exits 1 and prints file, document, kind, name and field path', async () => {
    const dir = tmp({ 'multi.yaml': `${VALID}---\n${INVALID}` });
    const file = path.join(dir, 'multi.yaml');
    const r = await run(['-f', file]);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      `${file}[1] Gateway default/gw: error: spec.servers[0].hosts[0]: short names (non FQDN) are not allowed`,
    );
    expect(r.out).toContain(`${file}[1] Gateway default/gw: error: spec.servers[0].port.name: port name must be set`);
    expect(r.out).toContain('2 object(s) checked, 1 invalid');
  });

  test('a directory is read recursively, and non-Istio kinds are skipped', async () => {
    const dir = tmp({
      'a.yaml': VALID,
      'sub/b.yml': DEPLOYMENT,
      'sub/c.json': JSON.stringify({
        apiVersion: 'security.istio.io/v1',
        kind: 'PeerAuthentication',
        metadata: { name: 'p' },
        spec: { mtls: { mode: 'STRICT' } },
      }),
      'notes.txt': 'ignored',
    });
    const r = await run(['-f', dir]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('2 object(s) checked, 0 invalid');
  });

  test('List items are validated with their index', async () => {
    const list = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'security.istio.io/v1',
          kind: 'PeerAuthentication',
          metadata: { name: 'p' },
          spec: { portLevelMtls: { '80': { mode: 'DISABLE' } } },
        },
      ],
    };
    const r = await run(['-f', '-', '-o', 'json'], JSON.stringify(list));
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toEqual([
      {
        file: '<stdin>',
        document: '0.items[0]',
        kind: 'PeerAuthentication',
        namespace: 'default',
        name: 'p',
        errors: [
          { path: 'spec.portLevelMtls', message: 'mesh/namespace peer authentication cannot have port level mTLS' },
        ],
        warnings: [],
      },
    ]);
  });

  test('warnings are printed but do not fail', async () => {
    const r = await run(
      ['-f', '-'],
      'apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: a}\nspec: {selector: {}}\n',
    );
    expect(r.code).toBe(0);
    expect(r.out).toContain('warning: spec.selector: workload selector specified without labels');
  });

  test('an unknown Istio kind and an unknown top-level field are errors', async () => {
    const r = await run(
      ['-f', '-'],
      'apiVersion: networking.istio.io/v1\nkind: Teleport\nmetadata: {name: a}\n---\napiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: b}\nextra: 1\n',
    );
    expect(r.code).toBe(1);
    expect(r.out).toContain('error: unrecognized type networking.istio.io/v1, Kind=Teleport');
    expect(r.out).toContain('error: extra: unknown field "extra" on PeerAuthentication resource default/b');
  });

  test('broken YAML is reported as an error of its document', async () => {
    const r = await run(['-f', '-'], 'apiVersion: [unclosed\n');
    expect(r.code).toBe(1);
    expect(r.out).toContain('<stdin>[0] ? /: error: YAML:');
  });

  test('--help prints usage and exits 0', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('Usage: istiod-ts validate -f FILE|DIR|-');
  });

  test('no -f is a usage error (exit 2)', async () => {
    const r = await run([]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('give at least one -f');
  });

  test('a missing file exits 1 naming it', async () => {
    const r = await run(['-f', '/nonexistent/file.yaml']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('cannot read /nonexistent/file.yaml: ENOENT');
  });
});
