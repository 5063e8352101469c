/**
 * What the live evaluation tests admit: the starter pack (two rules enforced) and generated rows of the
 * kinds its rules read, on a wall clock that may step back; and a fire as the fire log stores it.
 */
import fc from "fast-check";
import type { EventFields } from "../../../src/core/journal.js";
import type { EventKind } from "../../../src/core/kinds.js";
import type { Fire } from "../../../src/core/outcome.js";
import { assembleRuleSet } from "../../../src/core/rule-set.js";
import type { Source } from "../../../src/core/sources.js";
import { loadStarterPack } from "../../../src/core/starter-pack.js";

export const ruleSet = assembleRuleSet({
  starter: loadStarterPack(),
  policy: [],
  shadowPeriod: 0,
  enforce: ["restart-into-same-failure", "budget-exhaustion-recurring"],
});

export interface Input {
  readonly source: Source;
  readonly kind: EventKind;
  readonly event: EventFields;
  /** Wall-clock advance before this row, ms (may be negative: the clock steps back). */
  readonly advance: number;
}

const harness = fc.constantFrom("impl", "nightly", "worker");
export const input: fc.Arbitrary<Input> = fc.oneof(
  fc.record({
    source: fc.constant<Source>("observer"),
    kind: fc.constant<EventKind>("run_event"),
    event: fc.record({
      type: fc.constant("tool"),
      harness,
      run: fc.constantFrom("#1", "#2").chain((r) => harness.map((h) => `${h}${r}`)),
      action: fc.constantFrom("verify", "edit"),
      is_error: fc.boolean(),
      repo: fc.constant("forge.example/org/reduit"),
      digest: fc.constantFrom("d1", "d2"),
    }),
    advance: fc.integer({ min: -5_000, max: 20 * 60_000 }),
  }),
  fc.record({
    source: fc.constant<Source>("ledger"),
    kind: fc.constant<EventKind>("run_event"),
    event: harness.chain((h) =>
      fc.record({
        type: fc.constantFrom("opened", "closed"),
        harness: fc.constant(h),
        run: fc.constantFrom(`${h}#1`, `${h}#2`, `${h}#3`),
        outcome: fc.constantFrom("failed", "budget_exceeded", "success"),
        cause_digest: fc.constantFrom("c1", "c2"),
      }),
    ),
    advance: fc.integer({ min: 0, max: 30 * 60_000 }),
  }),
  fc.record({
    source: fc.constant<Source>("tick"),
    kind: fc.constant<EventKind>("tick"),
    event: fc.constant({ type: "tick" }),
    advance: fc.integer({ min: 0, max: 3 * 3_600_000 }),
  }),
);

/**
 * A workload that fires a notify (repeated-verify-failure) and a hold (restart-into-same-failure), given
 * to each property as an example so the rules it means to reach are reached whatever the seed.
 */
export const reachingInputs: readonly Input[] = [
  ...["impl#1", "impl#2"].map((run) => ({
    source: "observer" as const,
    kind: "run_event" as const,
    event: {
      type: "tool",
      harness: "impl",
      run,
      action: "verify",
      is_error: true,
      repo: "forge.example/org/reduit",
      digest: "d1",
    },
    advance: 1_000,
  })),
  ...["impl#1", "impl#2", "impl#3"].map((run) => ({
    source: "ledger" as const,
    kind: "run_event" as const,
    event: { type: "closed", harness: "impl", run, outcome: "failed", cause_digest: "c1" },
    advance: 1_000,
  })),
];

/** Fires as the fire log stores them (the columns both backends' readers give). */
export const firesOf = (fires: readonly Fire[]) =>
  fires.map((f) => ({
    fire_id: f.id,
    seq: f.seq,
    rule: f.rule,
    hash: f.hash,
    target_key: f.target?.key ?? null,
    effective_level: f.effectiveLevel,
    mode: f.mode,
    action: f.action,
    message: f.message,
  }));
