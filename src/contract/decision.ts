// Decision records: the facts a deciding function read, the rule that decided and the outcome, as
// `istiod-ts explain` and /debug/explain print them. The deciding functions themselves (the CA's node
// authorizer, the ambient derivation) take an optional DecisionTrace and write into it only when one
// is passed: `trace?.fact(name, value)` does not even evaluate its arguments when trace is
// undefined, so the serving path, which never passes one, pays one undefined check per step and
// keeps only the outcome. This leaf module holds the shape both sides share.

/** A value as read: text, a number, a flag, absent (null) or a list. */
export type FactValue = string | number | boolean | null | readonly string[];

export interface DecisionFact {
  /** What was read and from where, e.g. "pod bookinfo/x label istio.io/use-waypoint". */
  name: string;
  value: FactValue;
}

export interface DecisionStep {
  /** The part of the decision: node-authorization, workload, protocol, services, waypoint, policies. */
  topic: string;
  /** A stable id of the rule (e.g. "waypoint.namespace-label"): tests and JSON readers key on it. */
  rule: string;
  /** The rule in words, as an operator reads it. */
  text: string;
  /** The facts read since the previous step, in the order they were read. */
  facts: DecisionFact[];
  /** What the rule made of them. */
  outcome: string;
}

/** What deciding code writes into; only explain passes one. */
export interface DecisionTrace {
  fact(name: string, value: FactValue): void;
  /** Closes a step: the facts read since the last step, the rule applied to them and its outcome. */
  decide(topic: string, rule: string, text: string, outcome: string): void;
}

/**
 * Most steps one record keeps. A workload's steps grow with the Services and policies that select it;
 * a thousand is far beyond any real pod's (a few of each) and keeps a hostile mesh's record, and the
 * debug response carrying it, bounded. Steps past it are counted in `omittedSteps`.
 */
export const MAX_DECISION_STEPS = 1000;
/** Most facts one step keeps; the rest are counted in the record's `omittedFacts`. */
export const MAX_FACTS_PER_STEP = 200;

/** The DecisionTrace explain passes: it keeps the steps, bounded by the limits above. */
export class DecisionRecorder implements DecisionTrace {
  readonly steps: DecisionStep[] = [];
  omittedSteps = 0;
  omittedFacts = 0;
  private pending: DecisionFact[] = [];

  fact(name: string, value: FactValue): void {
    if (this.pending.length >= MAX_FACTS_PER_STEP) this.omittedFacts++;
    else this.pending.push({ name, value });
  }

  decide(topic: string, rule: string, text: string, outcome: string): void {
    const facts = this.pending;
    this.pending = [];
    if (this.steps.length >= MAX_DECISION_STEPS) this.omittedSteps++;
    else this.steps.push({ topic, rule, text, facts, outcome });
  }
}
