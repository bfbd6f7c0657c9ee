import { describeKind, InvalidCase, ValidCase } from './table';

const rule = (r: object) => ({ jwtRules: [{ issuer: 'https://issuer.example.com', ...r }] });
const publicJwks = JSON.stringify({ keys: [{ kty: 'RSA', e: 'AQAB', n: 'abc' }] });
const privateJwks = JSON.stringify({ keys: [{ kty: 'RSA', e: 'AQAB', n: 'abc', d: 'secret' }] });

const valid: ValidCase[] = [
  ['an issuer only', rule({})],
  ['a jwksUri only', { jwtRules: [{ jwksUri: 'https://example.com/jwks.json' }] }],
  ['an inline public JWKS', rule({ jwks: publicJwks })],
  [
    'headers, params and cookies',
    rule({ fromHeaders: [{ name: 'x-jwt', prefix: 'Bearer ' }], fromParams: ['token'], fromCookies: ['session'] }),
  ],
  ['claim to header', rule({ outputClaimToHeaders: [{ header: 'x-sub_id', claim: 'sub' }] })],
  ['a timeout of 5s', rule({ timeout: '5s' })],
  ['a timeout in Go duration syntax (istiod decodes with time.ParseDuration)', rule({ timeout: '1m30s' })],
  ['a private key in the JWKS warns', rule({ jwks: privateJwks }), 'contains private key material'],
];

const invalid: InvalidCase[] = [
  [
    'neither issuer nor jwksUri',
    { jwtRules: [{ audiences: ['a'] }] },
    'spec.jwtRules[0]: issuer or jwksUri must be non-empty string',
  ],
  [
    'a jwksUri with an ftp scheme',
    { jwtRules: [{ jwksUri: 'ftp://example.com/jwks' }] },
    'spec.jwtRules[0].jwksUri: URI scheme "ftp" is not supported',
  ],
  [
    'an empty audience',
    rule({ audiences: ['a', ''] }),
    'spec.jwtRules[0].audiences[1]: audience must be non-empty string',
  ],
  ['an inline JWKS that is not JSON', rule({ jwks: '{not json' }), 'spec.jwtRules[0].jwks: jwks parse error'],
  [
    'an inline JWKS with an unknown key type',
    rule({ jwks: JSON.stringify({ keys: [{ kty: 'XYZ' }] }) }),
    'unsupported "kty"',
  ],
  [
    'a header location without name',
    rule({ fromHeaders: [{ prefix: 'Bearer ' }] }),
    'fromHeaders[0].name: location header name must be non-empty string',
  ],
  ['an empty query param', rule({ fromParams: [''] }), 'fromParams[0]: location query must be non-empty string'],
  ['an empty cookie', rule({ fromCookies: [''] }), 'fromCookies[0]: cookie name must be non-empty string'],
  [
    'claim to header without claim',
    rule({ outputClaimToHeaders: [{ header: 'x-a' }] }),
    'outputClaimToHeaders header and claim value must be non-empty string',
  ],
  [
    'claim to an invalid header',
    rule({ outputClaimToHeaders: [{ header: 'x a', claim: 'sub' }] }),
    'header name x a is not a valid header name',
  ],
  ['a timeout below 1ms', rule({ timeout: '0.0005s' }), 'spec.jwtRules[0].timeout: duration must be greater than 1ms'],
  ['a timeout with sub-ms precision', rule({ timeout: '1.0005s' }), 'only durations to ms precision are supported'],
  ['a timeout that is not a duration', rule({ timeout: '5 minutes' }), 'bad Duration: invalid duration "5 minutes"'],
  [
    'selector with targetRefs',
    { selector: { matchLabels: { a: 'b' } }, targetRefs: [{ kind: 'Service', name: 'a' }] },
    'only one of targetRefs or workloadSelector can be set',
  ],
  ['a targetRef to a Pod', { targetRef: { kind: 'Pod', name: 'a' } }, 'targetRef must be to one of'],
];

describeKind('RequestAuthentication', valid, invalid);
