/**
 * The store's rows and the core's holds as RuleService's messages: fires with their actions and
 * primitive calls, holds in force and released. ListFires, ExplainFire, ListHolds and WatchEvents send
 * the same shapes.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { CoreState, Hold } from "../../core/state.js";
import type { StoredPrimitive } from "../store/decision-store.js";
import type { ActionRow, FireRow, HoldRow } from "../store/rule-reads.js";
import type { RuleReadsPort } from "../store/store-door.js";
import type {
  ActionOutcomeSchema,
  FireInfoSchema,
  HoldInfoSchema,
  HoldRecordSchema,
  PrimitiveCallInfoSchema,
  SelectorTermSchema,
} from "./gen/harness/v1/rules_pb.js";

export type HoldInit = MessageInitShape<typeof HoldInfoSchema>;
export type FireInit = MessageInitShape<typeof FireInfoSchema>;
export type HoldRecordInit = MessageInitShape<typeof HoldRecordSchema>;

/** The holds in force on a harness, oldest first. */
export function holdsOn(state: CoreState, harness: string): HoldInit[] {
  return sortedHolds(Object.values(state.holds).filter((h) => h.harness === harness)).map(holdInfo);
}

export const sortedHolds = (holds: readonly Hold[]): Hold[] =>
  [...holds].sort(
    (a, b) =>
      a.since - b.since || (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : a.harness < b.harness ? -1 : 1),
  );

export const holdInfo = (h: Hold): HoldInit => ({
  harness: h.harness,
  rule: h.rule,
  hash: h.hash,
  fireId: h.fireId,
  sinceMs: BigInt(h.since),
});

export function primitivesOf(row: FireRow): MessageInitShape<typeof PrimitiveCallInfoSchema>[] {
  let calls: StoredPrimitive[];
  try {
    calls = JSON.parse(row.primitives) as StoredPrimitive[];
  } catch (e) {
    throw new Error(
      `fire ${row.fire_id} (rule ${row.rule}, seq ${row.seq}): its primitives column is not JSON`,
      {
        cause: e,
      },
    );
  }
  return calls.map((c) => ({
    fn: c.fn,
    field: c.field ?? "",
    selector: [
      { field: "kind", value: { case: "text", value: c.selector.kind } },
      ...Object.entries(c.selector.fields).map(
        ([field, v]): MessageInitShape<typeof SelectorTermSchema> => ({
          field,
          value: typeof v === "boolean" ? { case: "flag", value: v } : { case: "text", value: v },
        }),
      ),
    ],
    withinMs: BigInt(c.withinMs),
    result:
      typeof c.result === "boolean"
        ? { case: "truth", value: c.result }
        : { case: "number", value: c.result },
  }));
}

export function fireInfo(r: FireRow, actions: readonly ActionRow[]): FireInit {
  return {
    fireId: r.fire_id,
    rule: r.rule,
    hash: r.hash,
    seq: BigInt(r.seq),
    atMs: BigInt(r.at),
    kind: r.kind,
    type: r.type,
    targetKind: r.target_kind ?? "",
    targetKey: r.target_key ?? "",
    harness: r.harness ?? "",
    run: r.run ?? "",
    declaredLevel: r.declared_level,
    effectiveLevel: r.effective_level,
    mode: r.mode,
    action: r.action,
    message: r.message,
    actions: actions.map(
      (a): MessageInitShape<typeof ActionOutcomeSchema> => ({
        action: a.action,
        state: a.state,
        detail: a.detail ?? "",
        updatedAtMs: BigInt(a.updated_at),
      }),
    ),
  };
}

/** A stored hold as ListHolds returns a released one. */
export function holdRecord(r: HoldRow): HoldRecordInit {
  return {
    hold: { harness: r.harness, rule: r.rule, hash: r.hash, fireId: r.fire_id, sinceMs: BigInt(r.since) },
    cooldownMs: BigInt(r.cooldown),
    falseSinceMs: BigInt(r.false_since ?? 0),
    releasedAtMs: BigInt(r.released_at ?? 0),
    releaseCause: r.release_cause ?? "",
    releasedBy: r.released_by ?? "",
  };
}

/**
 * The fire and hold records a commit made durable, read back by fire id in the shapes ListFires and
 * ListHolds return them, for WatchEvents to send as they commit.
 */
export interface CommittedRecords {
  fire(fireId: string): Promise<FireInit | undefined>;
  /** The hold a fire placed, in force or (after its release) released. */
  hold(fireId: string): Promise<HoldRecordInit | undefined>;
}

export function committedRecords(reads: RuleReadsPort): CommittedRecords {
  return {
    fire: async (fireId) => {
      const [row, actions] = await Promise.all([reads.fire(fireId), reads.actions(fireId)]);
      return row === undefined ? undefined : fireInfo(row, actions);
    },
    hold: async (fireId) => {
      const row = await reads.holdOf(fireId);
      return row === undefined ? undefined : holdRecord(row);
    },
  };
}
