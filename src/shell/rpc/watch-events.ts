/**
 * RuleService.WatchEvents (SPEC-0029 REQ-17): rule_fired, rule_hold and rule_hold_released as they
 * commit. The daemon publishes a commit's events to the bus only after the evaluator's transaction has
 * committed (the evaluator's `dispatch`), so a watcher never sees what a crash could undo; each event
 * is read back from the store in the shapes ListFires and ListHolds return. A watcher that reads slower
 * than events commit has a bounded buffer (`event-bus.ts`) and gets a gap, with how many it missed,
 * in their place; a cancelled or disconnected call unsubscribes, and the daemon's close ends the stream.
 *
 * The first message of every stream carries no event: it says the subscription is in place, so that
 * everything committed after the client has read it reaches the client (and it sends the response
 * headers at once, which Connect otherwise holds back until the first event).
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { Committed } from "../daemon/evaluator.js";
import type { EventBus } from "../daemon/event-bus.js";
import type { Log } from "../log.js";
import type { RuleService, WatchEventsResponseSchema } from "./gen/harness/v1/rules_pb.js";
import type { CommittedRecords } from "./rule-service.js";

export type WatchEvent = MessageInitShape<typeof WatchEventsResponseSchema>;

/**
 * A commit's events in commit order: each fire followed by the hold it placed, then the releases. A
 * release whose hold the store no longer has (it cannot, but the stream must not fail for it) is sent
 * with what the evaluator knew.
 */
export function committedEvents(committed: Committed, records: CommittedRecords): WatchEvent[] {
  const out: WatchEvent[] = [];
  const placed = new Set(committed.holdsPlaced.map((h) => h.fireId));
  for (const { fire } of committed.fires) {
    const info = records.fire(fire.id);
    if (info !== undefined) out.push({ event: { case: "ruleFired", value: info } });
    if (!placed.has(fire.id)) continue;
    placed.delete(fire.id);
    const hold = records.hold(fire.id);
    if (hold !== undefined) out.push({ event: { case: "ruleHold", value: hold } });
  }
  for (const fireId of placed) {
    const hold = records.hold(fireId);
    if (hold !== undefined) out.push({ event: { case: "ruleHold", value: hold } });
  }
  for (const r of committed.releases) {
    const stored = r.fireId === "" ? undefined : records.hold(r.fireId);
    out.push({
      event: {
        case: "ruleHoldReleased",
        value: stored ?? { hold: { harness: r.harness, rule: r.rule }, releaseCause: r.cause },
      },
    });
  }
  return out;
}

export interface WatchEventsDeps {
  readonly bus: EventBus<WatchEvent>;
  readonly log: Log;
}

export function watchEvents(deps: WatchEventsDeps): ServiceImpl<typeof RuleService>["watchEvents"] {
  const { bus, log } = deps;
  return async function* watch(_req, ctx) {
    const subscription = bus.subscribe({
      signal: ctx.signal,
      onEnd: (reason) => log.info({ watchers: bus.watchers, reason }, "event watcher left"),
    });
    log.info({ watchers: bus.watchers }, "event watcher joined");
    yield {};
    for await (const d of subscription)
      yield d.kind === "event" ? d.event : { event: { case: "gap", value: { missed: BigInt(d.missed) } } };
  };
}
