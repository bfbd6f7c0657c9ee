// Inputs are checked while the flags are read: a mistake exits 2 with one line naming the flag,
// before anything is created or bound.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEMO, localServeArgs, runCli, ServerProcess } from '../support/cli';

// Every listener off but none needed: the process must exit before binding anything anyway.
const QUIET = ['--grpcAddr', '', '--secureGRPCAddr', '', '--httpsAddr', '', '--monitoringAddr', '', '--httpAddr', ''];

function oneLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(stderr).not.toMatch(/\bat .*\.js:\d+/); // no stack trace
  return lines[0]!;
}

describe('start-up checks', () => {
  let stateDir: string;
  beforeEach(() => {
    stateDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-start-')), 'state');
  });
  afterEach(() => fs.rmSync(path.dirname(stateDir), { recursive: true, force: true }));

  test('a --configDir that does not exist exits 2 naming it, and creates no CA root in --stateDir', () => {
    const r = runCli(['--configDir', path.join(path.dirname(stateDir), 'nope'), '--stateDir', stateDir, ...QUIET]);
    expect(r.status).toBe(2);
    expect(oneLine(r.stderr)).toMatch(/^istiod-ts: invalid value for --configDir: .*nope does not exist$/);
    expect(fs.existsSync(stateDir)).toBe(false);
  });

  test('a --configDir that is a file exits 2 naming it', () => {
    const file = path.join(path.dirname(stateDir), 'a.yaml');
    fs.writeFileSync(file, '');
    const r = runCli(['--configDir', file, '--stateDir', stateDir, ...QUIET]);
    expect(r.status).toBe(2);
    expect(oneLine(r.stderr)).toMatch(/--configDir: .*a\.yaml is not a folder$/);
    expect(fs.existsSync(stateDir)).toBe(false);
  });

  test('an unknown level in --log_output_level exits 2 with one line, not a JSON error and exit 1', () => {
    const r = runCli(['--configDir', DEMO, '--stateDir', stateDir, '--log_output_level', 'ca:loud', ...QUIET]);
    expect(r.status).toBe(2);
    expect(oneLine(r.stderr)).toBe(
      'istiod-ts: invalid value for --log_output_level: unknown log level "loud" (one of trace, debug, info, warn, error, fatal, silent)',
    );
    expect(fs.existsSync(stateDir)).toBe(false);
  });

  test('a bad scope name in --log_output_level exits 2 naming it', () => {
    const r = runCli(['--configDir', DEMO, '--stateDir', stateDir, '--log_output_level', 'c a:debug', ...QUIET]);
    expect(r.status).toBe(2);
    expect(oneLine(r.stderr)).toBe('istiod-ts: invalid value for --log_output_level: invalid log scope "c a"');
  });

  test('a --stateDir that cannot be created (a file where a folder should be) exits 2 naming both', () => {
    const file = path.join(path.dirname(stateDir), 'file');
    fs.writeFileSync(file, '');
    const r = runCli(['--configDir', DEMO, '--stateDir', path.join(file, 'state'), ...QUIET]);
    expect(r.status).toBe(2);
    expect(oneLine(r.stderr)).toMatch(
      /^istiod-ts: invalid value for --stateDir: .*file is not a folder, so .*file\/state cannot be created$/,
    );
  });

  // Node's recursive mkdir never returns under /proc (ENOENT retried forever): the server hung after
  // its first log line instead of saying why.
  test('a --stateDir on a filesystem that refuses new folders (/proc) exits 2 naming the flag and the reason', () => {
    const r = runCli(['--configDir', DEMO, '--stateDir', '/proc/istiod-ts-state/nested', ...QUIET]);
    expect(r.status).toBe(2);
    expect(oneLine(r.stderr)).toBe(
      'istiod-ts: invalid value for --stateDir: /proc/istiod-ts-state cannot be created (its filesystem does not allow new folders there)',
    );
  });

  test('a --stateDir that is a file exits 2 naming it', () => {
    fs.mkdirSync(path.dirname(stateDir), { recursive: true });
    fs.writeFileSync(stateDir, '');
    const r = runCli(['--configDir', DEMO, '--stateDir', stateDir, ...QUIET]);
    expect(r.status).toBe(2);
    expect(oneLine(r.stderr)).toMatch(/--stateDir: .*state is not a folder$/);
  });
});

describe('istiod switches istiod-ts does not honour', () => {
  test('AMBIENT_ENABLE_MULTI_NETWORK_INGRESS=true starts with one warning naming it and why', async () => {
    const state = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-switches-'));
    const server = ServerProcess.start(localServeArgs(path.join(state, 'state')), {
      AMBIENT_ENABLE_MULTI_NETWORK_INGRESS: 'true',
      AMBIENT_ENABLE_MULTI_NETWORK: 'true',
    });
    try {
      await server.port('http');
      expect(server.logs.filter((l) => l['env'] === 'AMBIENT_ENABLE_MULTI_NETWORK')).toEqual([]);
      const warned = server.logs.filter((l) => l['env'] === 'AMBIENT_ENABLE_MULTI_NETWORK_INGRESS');
      expect(warned).toEqual([
        expect.objectContaining({
          level: 'warn',
          value: 'true',
          msg: expect.stringMatching(
            /^AMBIENT_ENABLE_MULTI_NETWORK_INGRESS is not honoured: .*serves no Envoy/,
          ) as string,
        }),
      ]);
    } finally {
      await server.stop();
      fs.rmSync(state, { recursive: true, force: true });
    }
  });
});
