// A bad auto-allocation range is a start-up usage error: exit 2, one line naming the variable,
// before anything is written or bound.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEMO, runCli } from '../support/cli';

const QUIET = ['--grpcAddr', '', '--secureGRPCAddr', '', '--httpsAddr', '', '--monitoringAddr', '', '--httpAddr', ''];

test('PILOT_IP_AUTOALLOCATE_IPV4_PREFIX that is not an IPv4 prefix exits 2 with one line naming it', () => {
  const state = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-ipalloc-')), 'state');
  try {
    const r = runCli(['--configDir', DEMO, '--stateDir', state, ...QUIET], {
      PILOT_IP_AUTOALLOCATE_IPV4_PREFIX: '240.240.0.0/40',
    });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      'istiod-ts: invalid value for env PILOT_IP_AUTOALLOCATE_IPV4_PREFIX: prefix length "40" is not a number from 0 to 32',
    ]);
    expect(fs.existsSync(state)).toBe(false);
  } finally {
    fs.rmSync(path.dirname(state), { recursive: true, force: true });
  }
});
