// Inline JWKS of a RequestAuthentication: must parse as a JWK or a JWK set; private key
// material is allowed but warned about (Envoy only needs public keys).

import { isObject, quote } from './common/fields';

const KEY_TYPES = ['RSA', 'EC', 'OKP', 'oct'];

export interface JwksCheck {
  error?: string;
  /** Indexes of keys that carry private material. */
  privateKeys: number[];
}

export function checkJwks(text: string): JwksCheck {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { error: `jwks parse error: ${(e as Error).message}`, privateKeys: [] };
  }
  if (!isObject(parsed)) return { error: 'jwks parse error: expected a JSON object', privateKeys: [] };
  const keys = Array.isArray(parsed['keys']) ? (parsed['keys'] as unknown[]) : 'keys' in parsed ? null : [parsed];
  if (keys === null) return { error: 'jwks parse error: "keys" must be a list', privateKeys: [] };
  const privateKeys: number[] = [];
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (!isObject(k)) return { error: `jwks parse error: key ${i} is not an object`, privateKeys: [] };
    const kty = k['kty'];
    if (typeof kty !== 'string' || !KEY_TYPES.includes(kty))
      return { error: `jwks parse error: key ${i} has unsupported "kty" ${quote(kty)}`, privateKeys: [] };
    if (kty === 'oct' || 'd' in k) privateKeys.push(i);
  }
  return { privateKeys };
}
