// A process that verified a CSR must still be able to exit: the verifier's worker threads are
// idle then and must not hold the event loop open. Runs the built code in its own process.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { makeCsr } from '../../support/ca/fixtures';

const CSR_MODULE = join(__dirname, '..', '..', '..', 'dist', 'src', 'ca', 'signing', 'csr.js');

it('a process exits on its own after verifying CSRs on the worker pool', async () => {
  const { pem } = await makeCsr();
  const script = `require(${JSON.stringify(CSR_MODULE)}).readCsr(process.env.CSR).then(() => console.log('verified'))`;
  const r = spawnSync(process.execPath, ['-e', script], {
    env: { ...process.env, CSR: pem },
    encoding: 'utf8',
    timeout: 20_000,
  });
  expect(r.stdout.trim()).toBe('verified');
  // A timeout kills the child with SIGTERM and leaves status null.
  expect(r.signal).toBeNull();
  expect(r.status).toBe(0);
});
