// The webhook's own shutdown hook drains by --shutdownDuration, not by a deadline of its own: a
// request that never finishes is cut when the process's drain ends, however long that is.
import * as tls from 'node:tls';
import { startWebhookServer } from '../../../src/webhook/server';
import { SERVER_NAME, throwawayCert, webhookContext } from '../../support/webhook/harness';

const cert = throwawayCert('istiod-shutdown');

test('a half-sent request is cut at --shutdownDuration by the webhook shutdown hook', async () => {
  const h = webhookContext();
  // 300 ms, far below close()'s built-in 10 s default: the hook must pass the flag's deadline on.
  (h.ctx.options.flags as { shutdownDuration: number }).shutdownDuration = 300;
  h.certs.set(cert);
  const server = await startWebhookServer(h.ctx);
  const socket = tls.connect({ host: '127.0.0.1', port: server.port!, ca: cert.rootsPem, servername: SERVER_NAME });
  await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  socket.write(
    'POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"half":',
  );
  await new Promise((r) => setTimeout(r, 50));
  // With the old hook (close() and its 10 s default) this outlives the 5 s test timeout.
  await h.shutdown();
  await closed;
  expect(socket.destroyed).toBe(true);
}, 5000);
