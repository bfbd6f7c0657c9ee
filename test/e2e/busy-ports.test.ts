// Every listener whose port is taken ends the start with exit 1 and one line naming its flag and
// the address, including the TLS listeners that bind only once the serving certificate exists
// (a busy --httpsAddr used to leave the process running with /ready at 503 forever).
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { BIN, DEMO } from '../support/cli';

const FLAGS = ['--grpcAddr', '--secureGRPCAddr', '--httpsAddr', '--monitoringAddr', '--httpAddr'] as const;

function run(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe('a listener whose port is taken', () => {
  let busy: net.Server;
  let port: number;
  let dir: string;

  beforeAll(async () => {
    busy = net.createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    port = (busy.address() as net.AddressInfo).port;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'istiod-ts-busy-'));
  });
  afterAll(async () => {
    await new Promise((r) => busy.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test.each(FLAGS)('%s: exit 1 with one line naming the flag and the address', async (flag) => {
    const addrs = FLAGS.flatMap((f) => [f, f === flag ? `127.0.0.1:${port}` : '127.0.0.1:0']);
    const { code, stderr } = await run(['--configDir', DEMO, '--stateDir', path.join(dir, 'state'), ...addrs]);
    expect(code).toBe(1);
    const problems = stderr.split('\n').filter((l) => l !== '' && !l.includes('"level":"info"'));
    expect(problems).toEqual([`istiod-ts: ${flag} 127.0.0.1:${port}: address already in use`]);
  });
});
