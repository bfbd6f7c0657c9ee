// PILOT_ENABLE_IP_AUTOALLOCATE and the two ranges, read as istiod reads them; a bad range is a
// usage error (exit 2, one line) naming the variable.

import { parseServeOptions } from '../../../src/config/options';
import { UsageError } from '../../../src/config/settings';

test('defaults are istiod’s: on, 240.240.0.0/16 and 2001:2::/48', () => {
  const { env } = parseServeOptions([], {});
  expect(env.PILOT_ENABLE_IP_AUTOALLOCATE).toBe(true);
  expect(env.PILOT_IP_AUTOALLOCATE_IPV4_PREFIX).toBe('240.240.0.0/16');
  expect(env.PILOT_IP_AUTOALLOCATE_IPV6_PREFIX).toBe('2001:2::/48');
});

test('the environment overrides them', () => {
  const { env } = parseServeOptions([], {
    PILOT_ENABLE_IP_AUTOALLOCATE: 'false',
    PILOT_IP_AUTOALLOCATE_IPV4_PREFIX: '100.64.0.0/10',
    PILOT_IP_AUTOALLOCATE_IPV6_PREFIX: 'fd00::/64',
  });
  expect(env.PILOT_ENABLE_IP_AUTOALLOCATE).toBe(false);
  expect(env.PILOT_IP_AUTOALLOCATE_IPV4_PREFIX).toBe('100.64.0.0/10');
  expect(env.PILOT_IP_AUTOALLOCATE_IPV6_PREFIX).toBe('fd00::/64');
});

test.each([
  [
    { PILOT_IP_AUTOALLOCATE_IPV4_PREFIX: '240.240.0.0' },
    'env PILOT_IP_AUTOALLOCATE_IPV4_PREFIX: "240.240.0.0" is not a CIDR prefix',
  ],
  [{ PILOT_IP_AUTOALLOCATE_IPV4_PREFIX: '240.240.0.0/33' }, 'prefix length "33" is not a number from 0 to 32'],
  [{ PILOT_IP_AUTOALLOCATE_IPV4_PREFIX: '2001:2::/48' }, '"2001:2::/48" is not an IPv4 prefix'],
  [{ PILOT_IP_AUTOALLOCATE_IPV4_PREFIX: '240.240.0/16' }, '"240.240.0" is not an IPv4 address'],
  [
    { PILOT_IP_AUTOALLOCATE_IPV6_PREFIX: '240.240.0.0/16' },
    'env PILOT_IP_AUTOALLOCATE_IPV6_PREFIX: "240.240.0.0/16" is not an IPv6 prefix',
  ],
  [{ PILOT_IP_AUTOALLOCATE_IPV6_PREFIX: '2001:2::/129' }, 'prefix length "129" is not a number from 0 to 128'],
  [{ PILOT_ENABLE_IP_AUTOALLOCATE: 'maybe' }, 'env PILOT_ENABLE_IP_AUTOALLOCATE: "maybe" is not a boolean'],
])('%j is a usage error naming the variable and the problem', (env, message) => {
  expect(() => parseServeOptions([], env)).toThrow(UsageError);
  expect(() => parseServeOptions([], env)).toThrow(message);
});
