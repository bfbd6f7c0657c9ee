// The node agent's side of ZDS (ztunnel's in-pod enrolment protocol, proto/zds.proto in
// istio/ztunnel), enough to enrol one pod as istio-cni does: answer ztunnel's hello, send the pod
// with its network namespace, then the end of the snapshot, each acknowledged. The packets cross a
// SOCK_SEQPACKET socket through zds/seqpacket-relay.py; the namespace is a real one, made with
// `ip netns add`, because ztunnel opens the pod's listeners inside it.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import * as protobuf from 'protobufjs';
import { atExit } from './cleanup';
import { REPO_ROOT } from '../test/support/cli';

export interface ZdsPod {
  uid: string;
  name: string;
  namespace: string;
  serviceAccount: string;
}

/** WorkloadRequest{add: AddWorkload{uid, workload_info: WorkloadInfo{name, namespace, service_account}}}. */
export function addWorkload(pod: ZdsPod): Uint8Array {
  const info = protobuf.Writer.create().uint32(10).string(pod.name).uint32(18).string(pod.namespace);
  info.uint32(26).string(pod.serviceAccount);
  const add = protobuf.Writer.create().uint32(10).string(pod.uid).uint32(18).bytes(info.finish());
  return protobuf.Writer.create().uint32(10).bytes(add.finish()).finish();
}

/** WorkloadRequest{snapshot_sent: SnapshotSent{}}. */
export const SNAPSHOT_SENT = Uint8Array.from([0x1a, 0x00]);
/** ZdsHello{version: V1}, ztunnel's first packet. */
export const HELLO_V1 = Uint8Array.from([0x08, 0x01]);

/** WorkloadResponse{ack: Ack{error}}: the error, '' for an ACK. */
export function ackError(packet: Uint8Array): string {
  const outer = protobuf.Reader.create(packet);
  let error = '';
  while (outer.pos < outer.len) {
    const tag = outer.uint32();
    if (tag >>> 3 === 1 && (tag & 7) === 2) {
      const ack = protobuf.Reader.create(outer.bytes());
      while (ack.pos < ack.len) {
        const t = ack.uint32();
        if (t >>> 3 === 1 && (t & 7) === 2) error = ack.string();
        else ack.skipType(t & 7);
      }
    } else outer.skipType(tag & 7);
  }
  return error;
}

/** A network namespace for one enrolled pod, with loopback up (ztunnel binds its DNS proxy there). */
export class PodNetns {
  constructor(readonly name: string) {}

  get path(): string {
    return `/var/run/netns/${this.name}`;
  }

  private forget: (() => void) | undefined;

  create(): void {
    execFileSync('ip', ['netns', 'add', this.name]);
    this.forget = atExit(() => this.remove());
    execFileSync('ip', ['-n', this.name, 'link', 'set', 'lo', 'up']);
  }

  remove(): void {
    this.forget?.();
    this.forget = undefined;
    try {
      execFileSync('ip', ['netns', 'del', this.name], { stdio: 'ignore' });
    } catch {
      // Already gone.
    }
  }
}

/** How long one ZDS exchange (a packet and its answer) may take. */
export const ZDS_STEP_TIMEOUT_MS = 30_000;

export class NodeAgent {
  private relay: ChildProcess | undefined;
  private readonly received: Uint8Array[] = [];
  private readonly events: string[] = [];
  private waiter: (() => void) | undefined;
  private stderr = '';

  /** Starts listening on ztunnel's INPOD_UDS path, before ztunnel starts, as istio-cni is there first. */
  async listen(socketPath: string): Promise<void> {
    const script = path.join(REPO_ROOT, 'interop', 'zds', 'seqpacket-relay.py');
    const relay = spawn('python3', [script, socketPath], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.relay = relay;
    relay.on(
      'exit',
      atExit(() => relay.kill('SIGKILL')),
    );
    let partial = '';
    this.relay.stdout?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const msg = JSON.parse(line) as { event?: string; recv?: string };
        if (msg.recv !== undefined) this.received.push(Buffer.from(msg.recv, 'base64'));
        if (msg.event) this.events.push(msg.event);
        this.waiter?.();
      }
    });
    this.relay.stderr?.on('data', (c: Buffer) => (this.stderr += c.toString('utf8')));
    await this.until(() => this.events.includes('listening'), 'the relay to listen');
  }

  private async until(done: () => boolean, what: string, timeoutMs = ZDS_STEP_TIMEOUT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline || this.relay?.exitCode != null)
        throw new Error(`ZDS: no ${what} (relay: ${this.events.join(', ')} ${this.stderr.trim()})`);
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
        setTimeout(resolve, 200);
      });
    }
  }

  private async next(what: string): Promise<Uint8Array> {
    await this.until(() => this.received.length > 0, what);
    return this.received.shift() ?? new Uint8Array();
  }

  private send(packet: Uint8Array, fd?: string): void {
    this.relay?.stdin?.write(
      `${JSON.stringify({ send: Buffer.from(packet).toString('base64'), ...(fd ? { fd } : {}) })}\n`,
    );
  }

  /** Waits for ztunnel's hello, then enrols the pod and closes the snapshot; throws on a NACK. */
  async enrol(pod: ZdsPod, netns: PodNetns): Promise<void> {
    await this.until(() => this.events.includes('connected'), "ztunnel's connection", 60_000);
    const hello = await this.next("ztunnel's hello");
    if (Buffer.compare(Buffer.from(hello), Buffer.from(HELLO_V1)) !== 0)
      throw new Error(`ZDS: hello was ${Buffer.from(hello).toString('hex')}, not ZdsHello{V1}`);
    this.send(addWorkload(pod), netns.path);
    const added = ackError(await this.next('answer to AddWorkload'));
    if (added) throw new Error(`ZDS: AddWorkload NACKed: ${added}`);
    this.send(SNAPSHOT_SENT);
    const snapshot = ackError(await this.next('answer to SnapshotSent'));
    if (snapshot) throw new Error(`ZDS: SnapshotSent NACKed: ${snapshot}`);
  }

  stop(): void {
    this.relay?.kill();
  }
}
