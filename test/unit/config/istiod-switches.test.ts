// istiod's ambient switches in one table: each is honoured by a setting of the same name, or named
// in a warning when set to ask for something istiod-ts does not do; docs/compat.md lists them all.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { ISTIOD_SWITCHES, unservedSwitches } from '../../../src/config/istiod-switches';
import { SERVE_ENV } from '../../../src/config/options';
import { REPO_ROOT } from '../../support/cli';

describe('the istiod switch table', () => {
  test('a switch is honoured exactly when a setting of its name reads it', () => {
    for (const s of ISTIOD_SWITCHES)
      expect({ name: s.name, read: Object.prototype.hasOwnProperty.call(SERVE_ENV, s.name) }).toEqual({
        name: s.name,
        read: s.honoured,
      });
  });

  test('names each switch once', () => {
    const names = ISTIOD_SWITCHES.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
  });

  test('docs/compat.md lists every switch', () => {
    const compat = fs.readFileSync(path.join(REPO_ROOT, 'docs/compat.md'), 'utf8');
    expect(ISTIOD_SWITCHES.map((s) => s.name).filter((n) => !compat.includes(`\`${n}\``))).toEqual([]);
  });
});

describe('unservedSwitches', () => {
  test('AMBIENT_ENABLE_MULTI_NETWORK is honoured either way; the Envoy-only multi-network switches are named', () => {
    expect(unservedSwitches({ AMBIENT_ENABLE_MULTI_NETWORK: 'true' })).toEqual([]);
    expect(unservedSwitches({ AMBIENT_ENABLE_MULTI_NETWORK: 'false' })).toEqual([]);
    expect(unservedSwitches({ AMBIENT_ENABLE_MULTI_NETWORK_INGRESS: 'true' })).toEqual([
      {
        name: 'AMBIENT_ENABLE_MULTI_NETWORK_INGRESS',
        value: 'true',
        reason: expect.stringMatching(/serves no Envoy/) as string,
      },
    ]);
  });

  test('PILOT_ENABLE_AMBIENT=true (the ambient profile) is what istiod-ts does; false is named', () => {
    expect(unservedSwitches({ PILOT_ENABLE_AMBIENT: 'true' })).toEqual([]);
    expect(unservedSwitches({ PILOT_ENABLE_AMBIENT: 'FALSE' }).map((u) => u.name)).toEqual(['PILOT_ENABLE_AMBIENT']);
  });

  test('an Envoy-only switch is named whatever its value; honoured switches and unset ones never are', () => {
    expect(
      unservedSwitches({
        AMBIENT_ENABLE_BAGGAGE: 'false',
        PILOT_AUTO_ALLOW_WAYPOINT_POLICY: 'true',
        AMBIENT_ENABLE_STATUS: 'false',
        PATH: '/usr/bin',
      }).map((u) => [u.name, u.reason]),
    ).toEqual([['AMBIENT_ENABLE_BAGGAGE', expect.stringMatching(/istiod-ts serves ztunnel only/)]]);
    expect(unservedSwitches({})).toEqual([]);
  });
});
