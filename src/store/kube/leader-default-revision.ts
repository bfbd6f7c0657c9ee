// Which revision is the cluster's default, for istiod's prioritized election: the revision label
// of the MutatingWebhookConfiguration that `istioctl tag set default` (or the default revision's
// chart) installs. istiod watches that one object; istiod-ts reads it when an election needs to
// know (a live lock held by another key) and at most once per cache period, so a fleet of
// followers does not turn into a stream of GETs.

import { scopedLogger } from '../../log/logger';
import type { KubeWriter, WriteOptions } from './writes';

const log = scopedLogger('leader');

/** The default tag's webhook, the name istiod's leader election looks for. */
export const DEFAULT_TAG_WEBHOOK = 'istio-revision-tag-default';
/** The label on it naming the revision the default tag points at. */
export const REVISION_LABEL = 'istio.io/rev';

export interface DefaultRevisionSource {
  /** The default revision, or '' when there is none (or it cannot be read): then no revision outranks another. */
  current(): Promise<string>;
}

export class WebhookDefaultRevision implements DefaultRevisionSource {
  private value = '';
  private readAtMs = Number.NEGATIVE_INFINITY;
  private inflight: Promise<string> | undefined;

  /**
   * @param cacheMs how long one read answers for; the elector passes its retry period, the
   *   cadence at which istiod's watch-fed answer could matter to a lock decision anyway.
   */
  constructor(
    private readonly writer: Pick<KubeWriter, 'get'>,
    private readonly cacheMs: number,
    private readonly opts: WriteOptions = {},
  ) {}

  current(): Promise<string> {
    if (Date.now() - this.readAtMs < this.cacheMs) return Promise.resolve(this.value);
    this.inflight ??= this.read().finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  private async read(): Promise<string> {
    try {
      const webhook = await this.writer.get(
        {
          group: 'admissionregistration.k8s.io',
          version: 'v1',
          plural: 'mutatingwebhookconfigurations',
          name: DEFAULT_TAG_WEBHOOK,
        },
        this.opts,
      );
      const next = webhook?.metadata.labels?.[REVISION_LABEL] ?? '';
      if (next !== this.value) log.info({ defaultRevision: next }, 'default revision changed');
      this.value = next;
    } catch (err) {
      // Keep the last answer: a missed read must not flip which revision wins. The next try waits
      // a cache period too, so a missing permission is one warning per period, not per election.
      log.warn({ webhook: DEFAULT_TAG_WEBHOOK, err: (err as Error).message }, 'cannot read the default revision');
    }
    this.readAtMs = Date.now();
    return this.value;
  }
}
