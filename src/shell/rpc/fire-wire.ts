/**
 * A replayed fire and its wire form (`BacktestFire`), both ways: Backtest streams it, a proposal's
 * backtest summary carries it, and the CLI and RecordProposal read it back.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ReplayedFire } from "../../core/backtest.js";
import { isLevel, TARGETS } from "../../core/rule-file.js";
import type { BacktestFire, BacktestFireSchema } from "./gen/harness/v1/rules_pb.js";

export function fireOf(f: ReplayedFire): MessageInitShape<typeof BacktestFireSchema> {
  return {
    seq: BigInt(f.seq),
    atMs: BigInt(f.at),
    kind: f.kind,
    type: f.type,
    targetKind: f.target?.kind ?? "",
    targetKey: f.target?.key ?? "",
    declaredLevel: f.declaredLevel,
    level: f.level,
    mode: f.mode,
    message: f.message,
    holds: f.hold !== undefined,
    holdUntilMs: BigInt(f.hold?.until?.at ?? 0),
    holdUntilSeq: BigInt(f.hold?.until?.seq ?? 0),
  };
}

/**
 * The fire a wire form denotes. A field out of its range (a level no rule has, a seq past 2^53) is
 * refused with the error `invalid` makes of its message, not carried on.
 */
export function replayedFireOf(f: BacktestFire, invalid: (message: string) => Error): ReplayedFire {
  const n = (v: bigint, what: string): number => {
    if (v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER))
      throw invalid(`a backtest fire's ${what} ${v} is out of range`);
    return Number(v);
  };
  if (!isLevel(f.declaredLevel) || !isLevel(f.level))
    throw invalid("a backtest fire's levels must be annotate, notify, hold or stop");
  if (f.mode !== "shadow" && f.mode !== "active")
    throw invalid("a backtest fire's mode must be shadow or active");
  if (f.targetKind !== "" && !(TARGETS as readonly string[]).includes(f.targetKind))
    throw invalid("a backtest fire's target must be run, harness, node or fleet");
  return {
    seq: n(f.seq, "seq"),
    at: n(f.atMs, "at_ms"),
    kind: f.kind,
    type: f.type,
    ...(f.targetKind === "" ? {} : { target: { kind: f.targetKind, key: f.targetKey } }),
    declaredLevel: f.declaredLevel,
    level: f.level,
    mode: f.mode,
    message: f.message,
    ...(f.holds
      ? {
          hold:
            f.holdUntilSeq === 0n
              ? {}
              : { until: { seq: n(f.holdUntilSeq, "hold seq"), at: n(f.holdUntilMs, "hold at") } },
        }
      : {}),
  };
}
