// WasmPlugin (extensions.istio.io): a Wasm module loaded into proxies.

import { EnvValueSource } from './common/enum-types';
import { enumOf, int, isObject, list, obj, str } from './common/fields';
import { at, idx, Report } from './common/report';
import { checkPolicyTargeting } from './common/selectors';
import type { SpecValidator } from './types';

export const MAX_IMAGE_PULL_SECRET_LENGTH = 253;
export const MAX_PLUGIN_NAME_LENGTH = 256;
export const MAX_ENV_NAME_LENGTH = 256;
const URL_SCHEMES = ['', 'file', 'http', 'https', 'oci'];

/** The scheme of a plugin URL; a bare reference such as `ghcr.io/org/plugin:1` has none. */
export function wasmUrlError(url: string): string | undefined {
  if (url === '') return 'url field needs to be set';
  // Like Go's url.ParseRequestURI: "scheme:/..." keeps its scheme; anything else (a bare image
  // reference such as "ghcr.io/org/plugin:1" or "host:5000/x") is retried as "http://...".
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):\//.exec(url);
  const scheme = (m?.[1] ?? '').toLowerCase(); // no match: no scheme
  if (/\s/.test(url)) return `failed to parse url: invalid character in "${url}"`;
  return URL_SCHEMES.includes(scheme) ? undefined : `url contains unsupported scheme: ${scheme}`;
}

function checkVmConfig(r: Report, v: unknown, path: string): void {
  const vm = obj(r, v, path);
  const envs = vm ? list(r, vm['env'], at(path, 'env')) : undefined;
  const names = new Set<string>();
  for (const [i, env] of (envs ?? []).entries()) {
    if (!isObject(env)) continue;
    const p = idx(at(path, 'env'), i);
    const name = str(r, env['name'], at(p, 'name')) ?? '';
    if (name === '') {
      r.error(at(p, 'name'), 'spec.vmConfig.env invalid');
      return;
    }
    if (name.length > MAX_ENV_NAME_LENGTH) {
      r.error(at(p, 'name'), 'env.name field must be less than 255 characters long');
      return;
    }
    if (names.has(name)) {
      r.error(at(p, 'name'), 'duplicate env');
      return;
    }
    names.add(name);
    const source = enumOf(r, env['valueFrom'], at(p, 'valueFrom'), EnvValueSource);
    if (source !== 'INLINE' && (str(r, env['value'], at(p, 'value')) ?? '') !== '') {
      r.error(at(p, 'value'), 'value may only be set when valueFrom is INLINE');
      return;
    }
  }
}

/** The module fields WasmPlugin and TrafficExtension's wasm share: url, sha256, pull secret, name, env. */
export function checkWasmModule(r: Report, spec: Record<string, unknown>, path: string): void {
  const p = (f: string) => (path ? `${path}.${f}` : f);
  const urlErr = wasmUrlError(str(r, spec['url'], p('url')) ?? '');
  if (urlErr) r.error(p('url'), urlErr);
  const sha = str(r, spec['sha256'], p('sha256')) ?? '';
  if (sha !== '' && sha.length !== 64) r.error(p('sha256'), 'sha256 field must be 64 characters long');
  else if (sha !== '' && !/^[a-f0-9]{64}$/.test(sha))
    r.error(p('sha256'), 'sha256 field must match [a-f0-9]{64} pattern');
  if ((str(r, spec['imagePullSecret'], p('imagePullSecret')) ?? '').length > MAX_IMAGE_PULL_SECRET_LENGTH) {
    r.error(p('imagePullSecret'), 'imagePullSecret field must be less than 253 characters long');
  }
  if ((str(r, spec['pluginName'], p('pluginName')) ?? '').length > MAX_PLUGIN_NAME_LENGTH)
    r.error(p('pluginName'), 'pluginName field must be less than 255 characters long');
  checkVmConfig(r, spec['vmConfig'], p('vmConfig'));
}

/** match[].ports[].number must be a port; istiod reports the first bad one. */
export function checkMatchPorts(r: Report, v: unknown, path: string): void {
  list(r, v, path)?.forEach((sel, i) => {
    const p = idx(path, i);
    const s = obj(r, sel, p);
    if (!s) {
      r.error(p, `spec.Match[${i}] is nil`);
      return;
    }
    list(r, s['ports'], at(p, 'ports'))?.forEach((port, j) => {
      const pp = idx(at(p, 'ports'), j);
      const n = isObject(port) ? (int(r, port['number'], at(pp, 'number')) ?? 0) : 0;
      if (!isObject(port)) r.error(pp, `spec.Match[${i}].Ports[${j}] is nil`);
      else if (n <= 0 || n > 65535) r.error(at(pp, 'number'), `spec.Match[${i}].Ports[${j}] is out of range: ${n}`);
    });
  });
}

export const validateWasmPlugin: SpecValidator = (r, spec) => {
  checkPolicyTargeting(r, spec, 'spec');
  checkWasmModule(r, spec, 'spec');
  checkMatchPorts(r, spec['match'], 'spec.match');
};
