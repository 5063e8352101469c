/**
 * `harness rules watch [--json]` (RuleService.WatchEvents): rule_fired, rule_hold and
 * rule_hold_released as the daemon commits them, one line each, until interrupted or until the daemon
 * stops. A watcher that reads too slowly gets one gap line saying how many events it missed, in their
 * place; `rules list`, `rules holds --released` and `rules explain` show what they were. Read tier.
 */
import type { FireInfo, HoldRecord, WatchEventsResponse } from "../../rpc/gen/harness/v1/rules_pb.js";
import { withClient } from "../client.js";
import { type Common, type Io, iso } from "../io.js";
import { fireJson } from "../render/fires.js";
import { holdOf, holdRecordJson, releaseWho } from "../render/holds.js";
import { printable } from "../render/printable.js";

/** Runs until `stop` aborts (exit 0), the daemon ends the stream (exit 0), or the call fails. */
export function runWatch(options: Common, io: Io, stop: AbortSignal): Promise<number> {
  return withClient("rules watch", options, io, async (client, socketPath) => {
    try {
      for await (const m of client.watchEvents({}, { signal: stop })) {
        // The first message carries no event: the subscription is in place.
        if (m.event.case === undefined) io.err(`harness rules watch: watching ${socketPath}; Ctrl-C stops`);
        else io.out(options.json === true ? JSON.stringify(watchJson(m)) : printable(watchLine(m)));
      }
    } catch (e) {
      if (stop.aborted) return 0;
      throw e;
    }
    io.err("harness rules watch: the daemon ended the stream (it is stopping)");
    return 0;
  });
}

type Event = Exclude<WatchEventsResponse["event"], { case: undefined }>;

/** An event as `--json` prints it. */
export function watchJson(m: WatchEventsResponse) {
  const e = m.event as Event;
  switch (e.case) {
    case "ruleFired":
      return { event: "rule_fired", ...fireJson(e.value) };
    case "ruleHold":
      return { event: "rule_hold", ...holdRecordJson(e.value) };
    case "ruleHoldReleased":
      return { event: "rule_hold_released", ...holdRecordJson(e.value) };
    case "gap":
      return { event: "gap", missed: Number(e.value.missed) };
    default:
      return unknownEvent(e);
  }
}

const target = (f: FireInfo): string =>
  f.targetKind === "" ? "(no target)" : `${f.targetKind} ${f.targetKey}`;

const holdLine = (verb: string, at: bigint, h: HoldRecord, tail: string): string => {
  const hold = holdOf(h);
  return `${iso(at) ?? "?"}  ${verb.padEnd(8)}  ${hold.fireId}  ${hold.rule}  harness ${hold.harness}${tail}`;
};

/** One readable line per event: the time it happened, what happened, the fire, the rule, the target. */
export function watchLine(m: WatchEventsResponse): string {
  const e = m.event as Event;
  switch (e.case) {
    case "ruleFired": {
      const f = e.value;
      return `${iso(f.atMs) ?? "?"}  ${"fired".padEnd(8)}  ${f.fireId}  ${f.rule}  ${target(f)}  ${f.effectiveLevel}, ${f.mode}: ${f.message}`;
    }
    case "ruleHold":
      return holdLine("held", holdOf(e.value).sinceMs, e.value, "");
    case "ruleHoldReleased":
      return holdLine("released", e.value.releasedAtMs, e.value, `  by ${releaseWho(e.value)}`);
    case "gap":
      return `gap: missed ${e.value.missed} events (this watcher read too slowly); see harness rules list and harness rules holds --released`;
    default:
      return unknownEvent(e);
  }
}

function unknownEvent(e: never): never {
  throw new Error(`the daemon sent an event this CLI does not know: ${String((e as Event).case)}`);
}
