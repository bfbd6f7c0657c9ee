// RequestAuthentication (security.istio.io): JWT issuers and where tokens are read from.

import { durationRuleError } from './common/durations';
import { durationField } from './common/duration-field';
import { eachMessage, list, obj, str, strList } from './common/fields';
import { at, idx, Report } from './common/report';
import { checkPolicyTargeting } from './common/selectors';
import { checkJwks } from './jwks';
import type { SpecValidator } from './types';

const STRICT_HEADER_NAME = /^[-_A-Za-z0-9]+$/;

function jwksUriError(uri: string): string | undefined {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return `URI scheme "" is not supported`;
  }
  const scheme = u.protocol.replace(/:$/, '');
  return scheme === 'http' || scheme === 'https' ? undefined : `URI scheme "${scheme}" is not supported`;
}

function checkJwtRule(r: Report, rule: Record<string, unknown>, path: string): void {
  strList(r, rule['audiences'], at(path, 'audiences'))?.forEach((a, i) => {
    if (a === '') r.error(idx(at(path, 'audiences'), i), 'audience must be non-empty string');
  });
  const issuer = str(r, rule['issuer'], at(path, 'issuer')) ?? '';
  const jwksUri = str(r, rule['jwksUri'], at(path, 'jwksUri')) ?? '';
  if (issuer === '' && jwksUri === '') r.error(path, 'issuer or jwksUri must be non-empty string');
  if (jwksUri !== '') {
    const err = jwksUriError(jwksUri);
    if (err) r.error(at(path, 'jwksUri'), err);
  }
  const jwks = str(r, rule['jwks'], at(path, 'jwks')) ?? '';
  if (jwks !== '') {
    const check = checkJwks(jwks);
    if (check.error) r.error(at(path, 'jwks'), check.error);
    for (const i of check.privateKeys)
      r.warn(
        at(path, 'jwks'),
        `jwks key at index ${i} contains private key material; only public keys are used for verification`,
      );
  }
  eachMessage(r, rule['fromHeaders'], at(path, 'fromHeaders'), 'location header name must be non-null', (header, p) => {
    if ((str(r, header['name'], at(p, 'name')) ?? '') === '')
      r.error(at(p, 'name'), 'location header name must be non-empty string');
  });
  strList(r, rule['fromParams'], at(path, 'fromParams'))?.forEach((q, i) => {
    if (q === '') r.error(idx(at(path, 'fromParams'), i), 'location query must be non-empty string');
  });
  strList(r, rule['fromCookies'], at(path, 'fromCookies'))?.forEach((c, i) => {
    if (c === '') r.error(idx(at(path, 'fromCookies'), i), 'cookie name must be non-empty string');
  });
  eachMessage(
    r,
    rule['outputClaimToHeaders'],
    at(path, 'outputClaimToHeaders'),
    'outputClaimToHeaders must not be null',
    (ch, p) => {
      const claim = str(r, ch['claim'], at(p, 'claim')) ?? '';
      const header = str(r, ch['header'], at(p, 'header')) ?? '';
      if (claim === '' || header === '') {
        r.error(p, 'outputClaimToHeaders header and claim value must be non-empty string');
        return;
      }
      if (!STRICT_HEADER_NAME.test(header))
        r.error(at(p, 'header'), `header name ${header} is not a valid header name`);
    },
  );
  const timeout = durationField(r, rule['timeout'], at(path, 'timeout'));
  if (timeout !== undefined) {
    const err = durationRuleError(timeout);
    if (err) r.error(at(path, 'timeout'), err);
  }
}

export const validateRequestAuthentication: SpecValidator = (r, spec) => {
  checkPolicyTargeting(r, spec, 'spec');
  list(r, spec['jwtRules'], 'spec.jwtRules')?.forEach((rule, i) => {
    const p = idx('spec.jwtRules', i);
    const o = obj(r, rule, p);
    if (o) checkJwtRule(r, o, p);
  });
};
