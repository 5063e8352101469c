/**
 * RuleService.WatchEvents (SPEC-0029 REQ-17): rule_fired, rule_hold and rule_hold_released as they
 * commit. The daemon publishes a commit's events to the bus only after the evaluator's transaction has
 * committed (the evaluator's `dispatch`), so a watcher never sees what a crash could undo; each event
 * is read back from the store in the shapes ListFires and ListHolds return. A watcher that reads slower
 * than events commit has a bounded buffer (`event-bus.ts`) and gets a gap, with how many it missed,
 * in their place; a cancelled or disconnected call unsubscribes, and the daemon's close ends the stream.
 * A reload that revokes the token a stream was opened with ends it with PERMISSION_DENIED.
 *
 * The first message of every stream carries no event: it says the subscription is in place, so that
 * everything committed after the client has read it reaches the client (and it sends the response
 * headers at once, which Connect otherwise holds back until the first event).
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { holdPlaced } from "../../core/outcome.js";
import type { Committed } from "../daemon/evaluator.js";
import type { EventBus } from "../daemon/event-bus.js";
import type { Log } from "../support/log.js";
import type { CredentialHolder, Credentials } from "./credentials.js";
import type { RuleService, WatchEventsResponseSchema } from "./gen/harness/v1/rules_pb.js";
import type { CommittedRecords } from "./messages.js";
import { CALLER, CREDENTIAL, stillHeld } from "./tiers.js";

export type WatchEvent = MessageInitShape<typeof WatchEventsResponseSchema>;

/**
 * A commit's events in commit order: each fire, followed by the hold it placed (evaluation places a
 * hold only from a fire of the same row), then the releases. Throws when the store lacks a record the
 * commit made, a fault of the daemon; `eventCount` says how many events the commit carried, so that
 * the watchers can be told how many they miss.
 */
export function committedEvents(committed: Committed, records: CommittedRecords): WatchEvent[] {
  const stored = <T>(record: T | undefined, what: string): T => {
    if (record === undefined) throw new Error(`${what} was committed but is not in the store`);
    return record;
  };
  const out: WatchEvent[] = [];
  for (const fire of committed.fires) {
    out.push({ event: { case: "ruleFired", value: stored(records.fire(fire.id), `fire ${fire.id}`) } });
    if (holdPlaced(fire) !== undefined)
      out.push({
        event: { case: "ruleHold", value: stored(records.hold(fire.id), `the hold of fire ${fire.id}`) },
      });
  }
  for (const r of committed.releases)
    out.push({
      event: {
        case: "ruleHoldReleased",
        value: stored(records.hold(r.fireId), `the release of ${r.harness}'s hold by rule ${r.rule}`),
      },
    });
  return out;
}

export const eventCount = (committed: Committed): number =>
  committed.fires.reduce((n, f) => n + (holdPlaced(f) === undefined ? 1 : 2), 0) + committed.releases.length;

export interface WatchEventsDeps {
  readonly bus: EventBus<WatchEvent>;
  readonly log: Log;
  readonly credentials: CredentialHolder;
}

export function watchEvents(deps: WatchEventsDeps): ServiceImpl<typeof RuleService>["watchEvents"] {
  const { bus, log, credentials } = deps;
  return async function* watch(_req, ctx) {
    const caller = ctx.values.get(CALLER);
    const credential = ctx.values.get(CREDENTIAL);
    let revoked = false;
    const subscription = bus.subscribe({
      signal: ctx.signal,
      onEnd: (reason) => log.info({ watchers: bus.watchers, reason }, "event watcher left"),
      onMiss: () =>
        log.warn(
          { watchers: bus.watchers },
          "event watcher reads slower than events commit; it misses them until it catches up",
        ),
    });
    const endIfRevoked = (inForce: Credentials) => {
      if (caller !== undefined && !stillHeld(caller, credential, inForce)) {
        revoked = true;
        subscription.end("revoked");
      }
    };
    const stopListening = credentials.onReplace(endIfRevoked);
    // A reload may have landed between the tier check and the subscription.
    endIfRevoked(credentials.current);
    // An issued token given a lifetime ends its stream when that runs out, not at the next change.
    const expiresMs = credentials.current.issued?.find(
      (t) => credential !== undefined && t.digest.equals(credential),
    )?.expiresMs;
    let expiry: NodeJS.Timeout | undefined;
    let done = false;
    const armExpiry = () => {
      if (expiresMs === undefined || revoked || done) return;
      // A timer waits at most 2^31 - 1 ms (about 24.8 days); a longer lifetime re-arms it.
      expiry = setTimeout(
        () => {
          endIfRevoked(credentials.current);
          armExpiry();
        },
        Math.min(Math.max(0, expiresMs - Date.now() + 1), 2 ** 31 - 1),
      );
    };
    armExpiry();
    // A watcher that stops reading and then goes away leaves this generator suspended at a yield for
    // good (the transport's write waits for a drain that never comes), so its finally never runs: what
    // it holds is let go when the call is aborted too.
    const letGo = () => {
      if (done) return;
      done = true;
      stopListening();
      clearTimeout(expiry);
    };
    ctx.signal.addEventListener("abort", letGo, { once: true });
    try {
      log.info({ watchers: bus.watchers }, "event watcher joined");
      yield {};
      for await (const d of subscription)
        yield d.kind === "event" ? d.event : { event: { case: "gap", value: { missed: BigInt(d.missed) } } };
    } finally {
      ctx.signal.removeEventListener("abort", letGo);
      letGo();
    }
    if (revoked)
      throw new ConnectError(
        "the credential this stream was opened with is no longer in force (revoked, expired, or gone from the config)",
        Code.PermissionDenied,
      );
  };
}
