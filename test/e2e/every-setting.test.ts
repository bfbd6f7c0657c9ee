// Every flag and every environment variable of `serve`, each given a bad value in its own run of
// the CLI: exit 2, one line on stderr naming the setting, no stack trace, nothing on stdout, and
// nothing written. A setting that accepts any text is listed below with the reason; a new setting
// must either refuse bad values or be added there on purpose.

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseServeOptions, SERVE_ENV, SERVE_FLAGS } from '../../src/config/options';
import { UsageError, type SettingSpec } from '../../src/config/settings';
import { BIN, DEMO } from '../support/cli';

/** Settings whose every value is meaningful, so no value is "bad" when the flags are read. */
const FREE_TEXT: Record<string, string> = {
  meshConfig: 'a missing file means "watch the istio ConfigMap instead", as istiod',
  kubeconfig: 'read when connecting; an unreadable one is reported then, with the path',
  domain: 'any DNS suffix',
  POD_NAMESPACE: 'any namespace name the chart sets',
  POD_NAME: 'any pod name',
  REVISION: 'any revision name',
  CLUSTER_ID: 'any cluster id',
  SHARED_MESH_CONFIG: 'a ConfigMap name; a missing one is watched until it appears',
  CA_TRUSTED_NODE_ACCOUNTS: 'ns/sa pairs; an unknown account simply never matches',
  ROOT_CA_DIR: 'a missing folder means "no plugged-in CA", as istiod',
  TOKEN_AUDIENCES: 'any audience names',
  PILOT_CA_CERT_CONFIGMAP: 'any ConfigMap name',
  ISTIOD_CUSTOM_HOST: 'extra DNS names',
  VALIDATION_WEBHOOK_CONFIG_NAME: 'a configuration name; empty turns the controller off',
};

const CANDIDATES: Record<SettingSpec['kind'], string[]> = {
  int: ['twelve'],
  bool: ['maybe'],
  duration: ['forever'],
  addr: ['no-port-here'],
  // A path under a file cannot be a folder, a file or a place to create one.
  string: ['/nonexistent/istiod-ts', path.join(BIN, 'under-a-file'), 'not a valid value!', '-1'],
  list: ['=nothing', '/nonexistent/istiod-ts', 'not a valid value!'],
};

interface Case {
  setting: string;
  label: string;
  value: string;
  args: string[];
  env: Record<string, string>;
}

// Made while the cases are collected, which is before beforeAll runs.
const state = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-settings-'));
afterAll(() => fs.rmSync(state, { recursive: true, force: true }));

const base = () => ['--configDir', DEMO, '--stateDir', path.join(state, 'never-created')];

/** The first candidate the flag parser refuses for this setting, found in-process. */
function badValue(kind: SettingSpec['kind'], build: (v: string) => { args: string[]; env: Record<string, string> }) {
  for (const value of CANDIDATES[kind]) {
    const { args, env } = build(value);
    try {
      parseServeOptions(args, env);
    } catch (err) {
      if (err instanceof UsageError) return value;
      throw err;
    }
  }
  return undefined;
}

function cases(): { refused: Case[]; accepted: string[] } {
  const refused: Case[] = [];
  const accepted: string[] = [];
  const flagSpecs: Record<string, SettingSpec> = SERVE_FLAGS;
  for (const [name, spec] of Object.entries(flagSpecs)) {
    if (name === 'help') continue;
    const build = (v: string) => ({ args: [...base(), `--${name}=${v}`], env: {} });
    const value = badValue(spec.kind, build);
    if (value === undefined) accepted.push(name);
    else refused.push({ setting: name, label: `--${name}`, value, ...build(value) });
  }
  const envSpecs: Record<string, SettingSpec> = SERVE_ENV;
  for (const [name, spec] of Object.entries(envSpecs)) {
    const build = (v: string) => ({ args: base(), env: { [name]: v } });
    const value = badValue(spec.kind, build);
    if (value === undefined) accepted.push(name);
    else refused.push({ setting: name, label: `env ${name}`, value, ...build(value) });
  }
  return { refused, accepted };
}

function run(c: Case): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const env: Record<string, string | undefined> = { ...process.env, ...c.env };
    const child = spawn(process.execPath, [BIN, ...c.args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    // A run that does not exit is a failure to report, not a hung suite.
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

describe('every setting with a bad value', () => {
  const { refused, accepted } = cases();

  it('leaves only the settings listed as free text without a bad value', () => {
    expect(accepted.sort()).toEqual(Object.keys(FREE_TEXT).sort());
  });

  it('exits 2 with one line naming the setting, for each of them', async () => {
    expect(refused.length).toBeGreaterThan(30);
    const failures: string[] = [];
    // A few processes at a time: each is a cold Node start.
    for (let i = 0; i < refused.length; i += 4) {
      const batch = refused.slice(i, i + 4);
      const results = await Promise.all(batch.map(run));
      results.forEach((r, j) => {
        const c = batch[j]!;
        const lines = r.stderr.split('\n').filter((l) => l !== '');
        const ok =
          r.status === 2 &&
          lines.length === 1 &&
          lines[0]!.startsWith('istiod-ts: ') &&
          lines[0]!.includes(c.label.startsWith('env ') ? c.setting : c.label) &&
          !/\n\s+at /.test(r.stderr) &&
          r.stdout === '';
        if (!ok) failures.push(`${c.label}=${c.value}: exit ${r.status}, stderr ${JSON.stringify(r.stderr)}`);
      });
    }
    expect(failures).toEqual([]);
    expect(fs.existsSync(path.join(state, 'never-created'))).toBe(false);
  }, 300_000);
});
