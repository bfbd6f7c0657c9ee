import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PUBLIC_FILE_MODE } from '../../../src/config/atomic-file';
import { ROOT_CERT_KEY, writeRootCertFile } from '../../../src/ca/roots/root-cert-publisher';

test('the local root-cert file is replaced whole, mode 0644, with no temporary file left beside it', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-root-'));
  try {
    writeRootCertFile(dir, 'old\n');
    const file = writeRootCertFile(dir, 'new\n');
    expect(file).toBe(path.join(dir, ROOT_CERT_KEY));
    expect(fs.readFileSync(file, 'utf8')).toBe('new\n');
    expect(fs.statSync(file).mode & 0o777).toBe(PUBLIC_FILE_MODE);
    expect(fs.readdirSync(dir)).toEqual([ROOT_CERT_KEY]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
