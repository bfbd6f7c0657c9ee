// Regexes are checked with RE2's syntax (as istiod compiles them with Go's regexp and Envoy runs
// them with RE2), not JavaScript's, with istiod's messages.
import {
  MAX_OBJECT_REGEX_PROGRAM_SIZE,
  MAX_REGEX_LENGTH,
  MAX_REGEX_PROGRAM_SIZE,
  re2Error,
  regexProgramSize,
} from '../../../src/webhook/validators/common/re2';
import { validateConfig } from '../../../src/webhook/validators/registry';

const RE2_HINT = '; Istio uses RE2 style regex-based match (https://github.com/google/re2/wiki/Syntax)';

describe('RE2-only syntax is accepted', () => {
  it.each([
    '\\pL',
    '\\p{Greek}',
    '\\PL+',
    '(?P<name>x)',
    '(?<name>x)',
    '[[:alpha:]]+',
    '\\x{10FFFF}',
    '\\Q.*\\E',
    '(?U)a+',
    '(?i)^/api/(?P<version>v[0-9]+)',
    '\\Aabc\\z',
    '(?s:.)',
  ])('%s', (re) => expect(re2Error(re)).toBeUndefined());
});

describe('syntax RE2 refuses is rejected with Go regexp messages', () => {
  it.each([
    ['(?=x)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?=`'],
    ['a(?!b)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?!`'],
    ['(a)\\1', 'error parsing regexp: invalid escape sequence: `\\1`'],
    ['(?P=name)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?P`'],
    // Accepted by JavaScript's engine, refused by RE2:
    ['a{1001}', 'error parsing regexp: invalid repeat count: `{1001}`'],
    ['\\8', 'error parsing regexp: invalid escape sequence: `\\8`'],
    ['\\cA', 'error parsing regexp: invalid escape sequence: `\\c`'],
    ['\\Z', 'error parsing regexp: invalid escape sequence: `\\Z`'],
    ['[[:foo:]]', 'error parsing regexp: invalid character class range: `[:foo:]`'],
    ['\\p{Foo}', 'error parsing regexp: invalid character class range: `\\p{Foo}`'],
    ['a**', 'error parsing regexp: invalid nested repetition operator: `**`'],
    ['(unclosed', 'error parsing regexp: missing closing ): `(unclosed`'],
  ])('%s', (re, message) => {
    const err = re2Error(re);
    expect(err?.startsWith(message)).toBe(true);
    expect(err?.endsWith(RE2_HINT)).toBe(true);
  });
  it('lookaround and backreferences say why', () => {
    expect(re2Error('(?=x)')).toContain('lookaround assertions are not supported');
    expect(re2Error('(a)\\1')).toContain('backreferences are not supported');
  });
});

describe('regex cost is bounded before it is compiled', () => {
  it('the length limit counts bytes, as Go len() does', () => {
    expect(MAX_REGEX_LENGTH).toBe(1024);
    expect(re2Error('é'.repeat(MAX_REGEX_LENGTH / 2))).toBeUndefined();
    expect(re2Error('é'.repeat(MAX_REGEX_LENGTH / 2 + 1))).toBe('regex is too large, max length allowed is 1024');
  });
  it('a program larger than Envoy accepts (repeats expanded) is rejected naming the limit', () => {
    expect(MAX_REGEX_PROGRAM_SIZE).toBe(32768);
    expect(re2Error('a{1000}'.repeat(32))).toBeUndefined();
    expect(re2Error('a{1000}'.repeat(33))).toMatch(
      /^regex program is too large: at least 33000 instructions, more than 32768/,
    );
    expect(re2Error('(a{100}b){400}')).toMatch(/regex program is too large/);
    expect(re2Error('((a{10}){10}){10}')).toBeUndefined();
  });
  it('the size counts what the program runs, not how groups are spelled', () => {
    expect(regexProgramSize('(?P<a_long_group_name>a)')).toBe(regexProgramSize('(a)'));
    expect(regexProgramSize('(?i:ab)')).toBe(regexProgramSize('(ab)'));
    expect(regexProgramSize('(?i)ab')).toBe(regexProgramSize('ab'));
    expect(regexProgramSize('[a-z0-9]{10}')).toBe(10);
    expect(regexProgramSize('\\p{Greek}{10}')).toBe(regexProgramSize('\\pL{10}'));
  });
});

describe('the regexes of one object are bounded together', () => {
  const big = '(a|b|c){1000}'.repeat(4); // 28,000 instructions, under the per-regex limit
  const vs = (n: number) => ({
    apiVersion: 'networking.istio.io/v1',
    kind: 'VirtualService',
    metadata: { name: 'v', namespace: 'd' },
    spec: {
      hosts: ['a'],
      http: [
        {
          match: Array.from({ length: n }, (_, i) => ({ uri: { regex: `${big}${i}` } })),
          route: [{ destination: { host: 'a' } }],
        },
      ],
    },
  });
  const errors = (o: unknown) => {
    const v = validateConfig(o);
    return v.outcome === 'validated' ? v.result.errors.map((e) => `${e.path}: ${e.message}`) : [v.message];
  };
  it('up to the limit every regex is compiled and accepted', () => {
    expect(MAX_OBJECT_REGEX_PROGRAM_SIZE).toBe(262144);
    expect(errors(vs(9))).toEqual([]);
  });
  it('past it the next regex is refused naming the limit, and the rest are not compiled', () => {
    const errs = errors(vs(12));
    expect(errs[0]).toBe(
      'spec.http[0].match[9].uri.regex: the regexes of this object need more than 262144 RE2 instructions together, the most one object may use',
    );
    expect(errs).toHaveLength(3);
  });
});

describe('the webhook uses RE2 in every regex field', () => {
  const vs = (http: unknown[]) => ({
    apiVersion: 'networking.istio.io/v1',
    kind: 'VirtualService',
    metadata: { name: 'v', namespace: 'd' },
    spec: { hosts: ['a'], http },
  });
  const errors = (o: unknown) => {
    const v = validateConfig(o);
    return v.outcome === 'validated' ? v.result.errors.map((e) => `${e.path}: ${e.message}`) : [v.message];
  };
  it('a uri match with \\pL is accepted', () => {
    expect(errors(vs([{ match: [{ uri: { regex: '/\\pL+' } }], route: [{ destination: { host: 'a' } }] }]))).toEqual(
      [],
    );
  });
  it('a uri match with \\Z is rejected at its path', () => {
    expect(errors(vs([{ match: [{ uri: { regex: 'a\\Z' } }], route: [{ destination: { host: 'a' } }] }]))[0]).toMatch(
      /^spec\.http\[0\]\.match\[0\]\.uri\.regex: error parsing regexp: invalid escape sequence/,
    );
  });
});
