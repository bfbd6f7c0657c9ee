import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { TOKEN_KEY_FILE } from '../../../src/security/local-jwt';
import { tempDir } from '../../support/ca/fixtures';
import { SERVER_NAME, readRoot, startHarness } from '../../support/ca/harness';

function peerCertificate(port: number, rootPem: string): Promise<crypto.X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect(
      { host: '127.0.0.1', port, ca: rootPem, servername: SERVER_NAME, ALPNProtocols: ['h2'], minVersion: 'TLSv1.3' },
      () => {
        const cert = new crypto.X509Certificate(socket.getPeerCertificate().raw);
        expect(socket.alpnProtocol).toBe('h2');
        socket.end();
        resolve(cert);
      },
    );
    socket.on('error', reject);
  });
}

describe('local mode across restarts', () => {
  test('a restart reuses the root, its 0600 key and the token key from --stateDir', async () => {
    const stateDir = tempDir();
    const first = await startHarness({ stateDir });
    const root = readRoot(first);
    const tokenKey = fs.readFileSync(path.join(stateDir, TOKEN_KEY_FILE), 'utf8');
    await first.close();
    const second = await startHarness({ stateDir });
    try {
      expect(readRoot(second)).toBe(root);
      expect(fs.readFileSync(path.join(stateDir, TOKEN_KEY_FILE), 'utf8')).toBe(tokenKey);
      expect(fs.statSync(path.join(stateDir, 'ca-key.pem')).mode & 0o777).toBe(0o600);
    } finally {
      await second.close();
    }
  });

  test('a renewed serving certificate reaches new TLS handshakes without restarting the listener', async () => {
    const h = await startHarness();
    try {
      const before = await peerCertificate(h.port, readRoot(h));
      const renewed = new Promise((resolve) => h.ctx.servingCerts.onChange(resolve));
      h.ca.authority.setMaterial(h.ca.authority.current());
      await renewed;
      const after = await peerCertificate(h.port, readRoot(h));
      expect(after.serialNumber).not.toBe(before.serialNumber);
      expect(after.fingerprint256).toBe(
        new crypto.X509Certificate(h.ctx.servingCerts.current().certChainPem).fingerprint256,
      );
    } finally {
      await h.close();
    }
  });
});
