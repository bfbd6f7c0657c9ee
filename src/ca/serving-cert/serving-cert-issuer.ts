// istiod's own serving certificate (secureGRPCAddr, httpsAddr), signed by the mesh CA with the
// DNS names clients dial. It is re-issued at half its life and whenever the CA or the names change.

import * as crypto from 'node:crypto';
import { promisify } from 'node:util';
import { errorMessage } from '../../log/error-message';
import { scopedLogger } from '../../log/logger';
import type { ServingCertificate, ServingCertSink } from '../../contract/serving-cert';
import type { CertificateAuthority } from '../signing/authority';
import type { SanEntry } from '../signing/leaf-signer';

const log = scopedLogger('ca');
const generateKeyPair = promisify(crypto.generateKeyPair);

/** Longest single timer; Node's setTimeout overflows past ~24.8 days. */
export const MAX_TIMER_MS = 24 * 3600 * 1000;
/** Fraction of the lifetime after which the certificate is renewed. */
export const RENEW_AT_FRACTION = 0.5;
/**
 * Shortest wait before the next renewal. A renewal whose certificate cannot outlive the CA chain
 * (its end is near or past) would otherwise be due again at once: a busy loop that made a key and
 * a log line per round. It waits this long instead, doubled after each failure up to
 * MAX_RENEW_BACKOFF_MS.
 */
export const MIN_RENEW_INTERVAL_MS = 60_000;
export const MAX_RENEW_BACKOFF_MS = 10 * 60_000;

export interface ServingNameInputs {
  namespace: string;
  revision: string;
  customHosts: readonly string[];
  discoveryAddress: string | undefined;
  local: boolean;
}

function hostOf(address: string): string | undefined {
  const trimmed = address.replace(/^[a-z]+:\/\//i, '');
  const host = trimmed.startsWith('[') ? trimmed.slice(1, trimmed.indexOf(']')) : trimmed.split(':')[0];
  return host || undefined;
}

/** istiod's getDNSNames, plus localhost and loopback IPs in local mode. */
export function servingSans(inp: ServingNameInputs): SanEntry[] {
  const dns = new Set<string>([
    `istiod.${inp.namespace}.svc`,
    `istiod-remote.${inp.namespace}.svc`,
    `istio-pilot.${inp.namespace}.svc`,
  ]);
  if (inp.revision !== '' && inp.revision !== 'default') dns.add(`istiod-${inp.revision}.${inp.namespace}.svc`);
  const discovery = inp.discoveryAddress ? hostOf(inp.discoveryAddress) : undefined;
  if (discovery && !/^[\d.]+$/.test(discovery) && !discovery.includes(':')) dns.add(discovery);
  for (const h of inp.customHosts) if (h) dns.add(h);
  if (inp.local) dns.add('localhost');
  const sans: SanEntry[] = [...dns].sort().map((d) => ({ dns: d }));
  if (inp.local) sans.push({ ip: '127.0.0.1' }, { ip: '::1' });
  return sans;
}

async function newKey(caKey: crypto.KeyObject): Promise<crypto.KeyObject> {
  const pair =
    caKey.asymmetricKeyType === 'ec'
      ? await generateKeyPair('ec', { namedCurve: 'prime256v1' })
      : await generateKeyPair('rsa', { modulusLength: 2048 });
  return pair.privateKey;
}

export async function issueServingCertificate(
  authority: CertificateAuthority,
  sans: readonly SanEntry[],
  ttlMs: number,
): Promise<{ cert: ServingCertificate; notBefore: number; notAfter: number }> {
  const material = authority.current();
  const key = await newKey(material.signingKey);
  const spki = crypto.createPublicKey(key).export({ format: 'der', type: 'spki' });
  const now = Date.now();
  const issued = await authority.issue(spki, sans, ttlMs, now);
  return {
    cert: {
      certChainPem: [issued.pem, ...material.chainPems].join(''),
      privateKeyPem: key.export({ format: 'pem', type: 'pkcs8' }) as string,
      rootsPem: material.rootBundlePem,
    },
    notBefore: now,
    notAfter: issued.notAfter.getTime(),
  };
}

/** Keeps `sink` filled with a current serving certificate. */
export class ServingCertRotator {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private renewAt = 0;
  private running: Promise<void> = Promise.resolve();
  private lastNames = '';

  /** Set while renewals cannot produce a certificate valid into the future: said once, counted each time. */
  private limitedSince: string | undefined;
  private backoffMs = MIN_RENEW_INTERVAL_MS;

  constructor(
    private readonly authority: CertificateAuthority,
    private readonly sink: ServingCertSink,
    private readonly sans: () => SanEntry[],
    private readonly ttlMs: () => number,
    /** Called for each renewal held back by the CA chain's end (the CA counts these). */
    private readonly onLimited: (reason: string) => void = () => undefined,
  ) {}

  /** Issues the first certificate; later renewals run in the background. */
  async start(): Promise<void> {
    await this.renew('start');
  }

  /** Re-issues now (CA rotated) or when the names changed (meshConfig). */
  trigger(why: string, onlyIfNamesChanged = false): void {
    if (onlyIfNamesChanged && JSON.stringify(this.sans()) === this.lastNames) return;
    this.running = this.running.then(() => this.renew(why)).catch((err: unknown) => this.failed(err));
  }

  /** A renewal that failed (e.g. the chain has expired) is tried again after a growing wait, not at once. */
  private failed(err: unknown): void {
    const reason = errorMessage(err);
    this.limited(`renewing failed: ${reason}`);
    this.renewAt = Date.now() + this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, MAX_RENEW_BACKOFF_MS);
    this.schedule();
  }

  /** Says once why renewals are held back (until one succeeds normally again), and counts each. */
  private limited(reason: string): void {
    this.onLimited(reason);
    if (this.limitedSince !== undefined) return;
    this.limitedSince = reason;
    log.error(
      { reason, retryInMs: this.backoffMs },
      'the serving certificate cannot be renewed beyond the CA chain; renewals back off until the CA changes',
    );
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private async renew(why: string): Promise<void> {
    if (this.stopped) return;
    const sans = this.sans();
    const { cert, notBefore, notAfter } = await issueServingCertificate(this.authority, sans, this.ttlMs());
    this.lastNames = JSON.stringify(sans);
    this.sink.set(cert);
    this.renewAt = notBefore + (notAfter - notBefore) * RENEW_AT_FRACTION;
    if (this.renewAt - Date.now() < MIN_RENEW_INTERVAL_MS) {
      // Cut short by the CA chain's end: renewing sooner would only return the same end again.
      this.limited(`the CA chain ends at ${new Date(notAfter).toISOString()}`);
      this.renewAt = Date.now() + MIN_RENEW_INTERVAL_MS;
    } else if (this.limitedSince !== undefined) {
      log.info({ notAfter: new Date(notAfter).toISOString() }, 'the serving certificate renews normally again');
      this.limitedSince = undefined;
      this.backoffMs = MIN_RENEW_INTERVAL_MS;
    }
    log.info(
      { why, names: sans.map((s) => Object.values(s)[0]), notAfter: new Date(notAfter).toISOString() },
      'serving certificate issued',
    );
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.stopped) return;
    const delay = Math.max(0, Math.min(this.renewAt - Date.now(), MAX_TIMER_MS));
    this.timer = setTimeout(() => {
      if (Date.now() >= this.renewAt) this.trigger('half-life');
      else this.schedule();
    }, delay);
    this.timer.unref();
  }
}
