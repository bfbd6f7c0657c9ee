// AdmissionReviews of every validated kind, mutated structurally (and now and then as text), fed
// to the webhook's pure exchange (reviewAdmission: bytes in, HTTP status and body out). A throw
// or a 5xx is a failure: the server would answer 500 or die. A denial is a clean refusal.

import { reviewAdmission } from '../../src/webhook/admission';
import { ADMISSION_SEEDS, admissionReview, seedObject } from './admission-seeds';
import { Json, mutateJson, mutateText, toJsonText } from './mutate-json';
import type { Rng } from './prng';
import { CaseRecord, count, FuzzFailure, FuzzTarget, Verdict } from './target';

export function admissionTarget(): FuzzTarget {
  const objects = ADMISSION_SEEDS.map(([apiVersion, kind, spec]) => seedObject(apiVersion, kind, spec));
  const reviews = ADMISSION_SEEDS.map(([apiVersion, kind], i) => admissionReview(apiVersion, kind, objects[i]!));
  const tally = new Map<string, number>();
  return {
    name: 'admission',
    describe: `AdmissionReviews of ${ADMISSION_SEEDS.length} kinds into reviewAdmission() (src/webhook/admission.ts)`,
    tally,
    run(rng: Rng, record: CaseRecord): Verdict {
      const k = rng.int(ADMISSION_SEEDS.length);
      const [apiVersion, kind] = ADMISSION_SEEDS[k]!;
      let review: Json;
      if (rng.chance(0.85)) {
        // Most mutations land in the object, where the validators work.
        review = admissionReview(
          apiVersion,
          kind,
          mutateJson(rng, objects[k]!, objects),
          rng.chance(0.8) ? 'CREATE' : 'UPDATE',
        );
      } else {
        review = mutateJson(rng, reviews[k]!, reviews, 2);
      }
      let text = toJsonText(review);
      if (rng.chance(0.1)) text = mutateText(rng, text);
      record.input = text;
      const reply = reviewAdmission(Buffer.from(text), 'application/json');
      if (reply.status >= 500) throw new FuzzFailure(`answered ${reply.status}: ${reply.body.slice(0, 200)}`);
      if (reply.status !== 200) {
        count(tally, `${kind}: HTTP ${reply.status}`);
        return 'refused';
      }
      const parsed = JSON.parse(reply.body) as { response?: { allowed?: unknown; uid?: unknown } };
      if (typeof parsed.response?.allowed !== 'boolean')
        throw new FuzzFailure(`a 200 answer without response.allowed: ${reply.body.slice(0, 200)}`);
      count(tally, `${kind}: ${parsed.response.allowed ? 'allowed' : 'denied'}`);
      return parsed.response.allowed ? 'accepted' : 'refused';
    },
  };
}
