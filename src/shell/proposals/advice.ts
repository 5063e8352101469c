/**
 * Advice on a proposal at store time: what a reviewer would ask first (does a rule in force already do
 * this, does it ever fire, does it replace a starter rule). Told in propose_rule's result and never a
 * refusal: REQ-15's list of rejections is closed.
 */
export type ProposalAdviceKind = "duplicate_expression" | "duplicate_when" | "no_fires" | "starter_override";

export interface ProposalAdvice {
  readonly kind: ProposalAdviceKind;
  /** One sentence for the agent, naming what to do about it. */
  readonly message: string;
  /** The loaded rule it concerns (the duplicates and the starter override). */
  readonly rule?: string;
}
