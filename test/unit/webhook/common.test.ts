import { durationRuleError, parseGoDuration } from '../../../src/webhook/validators/common/durations';
import {
  fqdnError,
  isDNS1123Label,
  labelErrors,
  wildcardDomainError,
  DNS1123_LABEL_MAX_LENGTH,
  DOMAIN_MAX_LENGTH,
} from '../../../src/webhook/validators/common/hosts';
import { isCIDR, isIPAddress } from '../../../src/webhook/validators/common/net';
import { parseProtocol, portError, MAX_PORT } from '../../../src/webhook/validators/common/ports';
import { re2Error, MAX_REGEX_LENGTH } from '../../../src/webhook/validators/common/re2';

describe('durations', () => {
  test.each([
    ['1.5s', 1_500_000_000n],
    ['30ms', 30_000_000n],
    ['1h30m', 5_400_000_000_000n],
    ['0', 0n],
    ['-2s', -2_000_000_000n],
    ['.5s', 500_000_000n],
  ])('%s parses as Go time.ParseDuration does', (text, nanos) => {
    expect(parseGoDuration(text)).toBe(nanos);
  });
  test.each(['', '5', 's', '1 s', '1d', '1.5'])('%j is not a duration', (text) => {
    expect(parseGoDuration(text)).toBeUndefined();
  });
  test('durations must be whole milliseconds of at least 1ms', () => {
    expect(durationRuleError(1_000_000n)).toBeUndefined();
    expect(durationRuleError(999_999n)).toBe('duration must be greater than 1ms');
    expect(durationRuleError(1_500_000n)).toBe('only durations to ms precision are supported');
  });
});

describe('hosts', () => {
  test('a DNS label is at most 63 characters', () => {
    expect(isDNS1123Label('a'.repeat(DNS1123_LABEL_MAX_LENGTH))).toBe(true);
    expect(isDNS1123Label('a'.repeat(DNS1123_LABEL_MAX_LENGTH + 1))).toBe(false);
  });
  test('a domain is at most 255 characters', () => {
    const long = `${'a.'.repeat(DOMAIN_MAX_LENGTH / 2)}com`;
    expect(wildcardDomainError(long)).toContain('too long (max 255)');
  });
  test.each(['*', '*.example.com', '*-foo.example.com', 'a.b.c', 'example.com.'])(
    '%s is a valid wildcard domain',
    (h) => {
      expect(wildcardDomainError(h)).toBeUndefined();
    },
  );
  test.each(['a.*.com', 'foo*.com', '', 'a..b', 'example.123', '-a.com'])('%j is not a valid wildcard domain', (h) => {
    expect(wildcardDomainError(h)).toBeDefined();
  });
  test('an FQDN may not contain a wildcard', () => {
    expect(fqdnError('*.example.com')).toContain('invalid');
  });
  test('label keys may have a DNS prefix; values are qualified names', () => {
    expect(labelErrors({ 'app.kubernetes.io/name': 'web', version: '' })).toEqual([]);
    expect(labelErrors({ 'a/b/c': 'x' })).toEqual(['invalid tag key: "a/b/c"']);
    expect(labelErrors({ k: '-x' })).toEqual(['invalid tag value: "-x"']);
  });
});

describe('addresses', () => {
  test.each(['10.0.0.1', '::1', '2001:db8::1', 'fe80::1%eth0', '::ffff:1.2.3.4'])('%s is an IP address', (a) => {
    expect(isIPAddress(a)).toBe(true);
  });
  test.each(['10.0.0.256', '010.0.0.1', '1.2.3', 'host', ''])('%j is not an IP address (Go netip rules)', (a) => {
    expect(isIPAddress(a)).toBe(false);
  });
  test.each([
    ['10.0.0.0/8', true],
    ['10.0.0.1/32', true],
    ['::/0', true],
    ['10.0.0.0/33', false],
    ['10.0.0.0/08', false],
    ['fe80::1%eth0/64', false],
  ])('%s is a CIDR: %s', (c, ok) => {
    expect(isCIDR(c)).toBe(ok);
  });
});

describe('ports and protocols', () => {
  test('ports are 1..65535', () => {
    expect(portError(1)).toBeUndefined();
    expect(portError(MAX_PORT)).toBeUndefined();
    expect(portError(0)).toBe('port number 0 must be in the range 1..65535');
    expect(portError(MAX_PORT + 1)).toBeDefined();
  });
  test('protocols are parsed case-insensitively; unknown ones are unsupported', () => {
    expect(parseProtocol('grpc-web')).toBe('GRPC-Web');
    expect(parseProtocol('Http2')).toBe('HTTP2');
    expect(parseProtocol('quic')).toBe('Unsupported');
  });
});

describe('RE2 regexes', () => {
  test('RE2-only syntax is accepted', () => {
    expect(re2Error('(?i)^/api/(?P<version>v[0-9]+)')).toBeUndefined();
  });
  test('lookaround and backreferences are rejected', () => {
    expect(re2Error('a(?!b)')).toContain('lookaround');
    expect(re2Error('(a)\\1')).toContain('backreferences');
  });
  test('a regex over the length limit is rejected', () => {
    expect(re2Error('a'.repeat(MAX_REGEX_LENGTH))).toBeUndefined();
    expect(re2Error('a'.repeat(MAX_REGEX_LENGTH + 1))).toBe('regex is too large, max length allowed is 1024');
  });
});
