/**
 * ExplainFire of a decision no rule made (SPEC-0029 REQ-12): the loop guard's stop of a hook-fed run,
 * whose id is `journal:<seq>` of its `loop_stopped` row (the id the agent's deny reason names), and the
 * stale run closer's `closed` row. Each is told from the journal and the store: for a loop stop, the
 * identical call (tool and digest), the streak of identical tool rows that tripped the guard, the stop's
 * delivery and release, and the command that lets the session start again.
 */
import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import { formatDuration } from "../../core/durations.js";
import { resumeCommand, stoppedSentence } from "../../core/held-sentence.js";
import { isHookFed } from "../../core/hook-runs.js";
import type { EventFields } from "../../core/journal.js";
import { LOOP_THRESHOLD } from "../../core/loop-guard.js";
import type { RuleReadsPort } from "../store/store-door.js";
import type { ExplainFireResponseSchema } from "./gen/harness/v1/rules_pb.js";

type Explanation = MessageInitShape<typeof ExplainFireResponseSchema>;

/** The stale run closer's reason on the `closed` rows it writes (`agents/enforcement/stale-runs.ts`). */
const STALE_REASON = "stale";

/** How far back a loop stop's streak is looked for: the threshold's rows, and marks between them. */
const STREAK_LOOKBACK = LOOP_THRESHOLD * 4;

const JOURNAL_ID = /^journal:([1-9][0-9]{0,15})$/;

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** The explanation of `journal:<seq>` when that row is a guard's decision; undefined otherwise. */
export async function explainGuard(reads: RuleReadsPort, id: string): Promise<Explanation | undefined> {
  const m = JOURNAL_ID.exec(id);
  if (m === null) return undefined;
  const stored = await reads.journalRow(Number(m[1]));
  if (stored === undefined || stored.kind !== "run_event") return undefined;
  const event = JSON.parse(stored.event) as JsonObject;
  const row = {
    seq: BigInt(stored.seq),
    kind: stored.kind,
    type: stored.type,
    atMs: BigInt(stored.at),
    source: stored.source,
    event,
  };
  const harness = str(event.harness);
  const run = str(event.run);
  if (run === "") return undefined;
  if (stored.type === "loop_stopped" && stored.source === "loopguard")
    return {
      row,
      nowMs: BigInt(stored.at),
      guard: await loopStop(reads, id, stored.seq, harness, run, event),
    };
  if (stored.type === "closed" && event.reason === STALE_REASON)
    return {
      row,
      nowMs: BigInt(stored.at),
      guard: await staleClose(reads, stored.seq, stored.at, harness, run),
    };
  return undefined;
}

async function loopStop(
  reads: RuleReadsPort,
  id: string,
  seq: number,
  harness: string,
  run: string,
  event: JsonObject,
) {
  const tool = str(event.tool);
  const digest = str(event.digest);
  // The rows just before the stop, newest first: the tripping call and the identical tool rows before
  // it, up to the threshold (the streak the guard counted: it trips at the threshold's call).
  const [before, stop] = await Promise.all([
    reads.runRowsBefore(run, seq, STREAK_LOOKBACK),
    reads.loopStop(run),
  ]);
  const streak = [];
  for (const r of before) {
    if (r.type !== "tool") continue;
    if (r.tool !== tool || r.digest !== digest || streak.length === LOOP_THRESHOLD) break;
    streak.push(r);
  }
  const first = streak.at(-1);
  const last = streak[0];
  const released = stop?.released_at !== null && stop?.released_at !== undefined;
  // A supervised run's loop stop is its supervisor's: it stopped the harness, and no hook call is told.
  const hookFed = isHookFed(event as EventFields);
  return {
    kind: "loop_stopped",
    harness,
    run,
    tool,
    digest,
    threshold: LOOP_THRESHOLD,
    streakRows: streak.length,
    firstSeq: BigInt(first?.seq ?? 0),
    firstAtMs: BigInt(first?.at ?? 0),
    lastSeq: BigInt(last?.seq ?? 0),
    lastAtMs: BigInt(last?.at ?? 0),
    deliveredAtMs: BigInt(stop?.delivered_at ?? 0),
    releasedAtMs: BigInt(stop?.released_at ?? 0),
    sentence: hookFed
      ? stoppedSentence({ run, rule: "loop-guard", fireId: id, by: "loop_guard", released })
      : `${run} was stopped by its supervisor's loop guard (the same tool call over and over), which stopped harness ${harness}`,
    resumeCommand: hookFed ? resumeCommand(run) : "",
  };
}

async function staleClose(reads: RuleReadsPort, seq: number, at: number, harness: string, run: string) {
  const last = (await reads.runRowsBefore(run, seq, 1))[0];
  const idle =
    last === undefined
      ? ""
      : ` after ${formatDuration(Math.max(0, at - last.at))} with no row from its agent`;
  return {
    kind: "stale_closed",
    harness,
    run,
    lastSeq: BigInt(last?.seq ?? 0),
    lastAtMs: BigInt(last?.at ?? 0),
    sentence: `${run} was closed interrupted by the stale run closer${idle} (longer than [agents] stale_after); a later hook call of its session goes on as a new run`,
  };
}
