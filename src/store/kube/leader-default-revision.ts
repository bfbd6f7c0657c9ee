// Which revision is the cluster's default, for istiod's prioritized election: the revision label
// of the MutatingWebhookConfiguration that `istioctl tag set default` (or the default revision's
// chart) installs. istiod watches that one object; istiod-ts reads it when an election needs to
// know (a live lock held by another key) and at most once per cache period, so a fleet of
// followers does not turn into a stream of GETs.
//
// An ambient install has no injector, so istiod-ts's chart renders a tag as its Service only
// (istiod-revision-tag-<tag> in the system namespace, labelled with the revision, which is also
// how istioctl lists tags). Without the webhook, that Service's label is the answer.

import { scopedLogger } from '../../log/logger';
import type { KubeWriter, WriteOptions } from './writes';

const log = scopedLogger('leader');

/** The default tag's webhook, the name istiod's leader election looks for. */
export const DEFAULT_TAG_WEBHOOK = 'istio-revision-tag-default';
/** The default tag's Service in the system namespace, read when the webhook is absent. */
export const DEFAULT_TAG_SERVICE = 'istiod-revision-tag-default';
/** The label on either naming the revision the default tag points at. */
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
    /** The system namespace, where the default tag's Service lives; absent, only the webhook is read. */
    private readonly systemNamespace?: string,
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
      const tagService =
        webhook || this.systemNamespace === undefined
          ? undefined
          : await this.writer.get(
              {
                group: '',
                version: 'v1',
                plural: 'services',
                namespace: this.systemNamespace,
                name: DEFAULT_TAG_SERVICE,
              },
              this.opts,
            );
      const next = (webhook ?? tagService)?.metadata.labels?.[REVISION_LABEL] ?? '';
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
