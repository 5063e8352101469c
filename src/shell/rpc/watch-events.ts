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
 * hold only from a fire of the same row), then the releases. Rejects when the store lacks a record the
 * commit made, a fault of the daemon; `eventCount` says how many events the commit carried, so that
 * the watchers can be told how many they miss. Every record is asked for before any is awaited: on
 * SQLite each answers at once, so they are read as the commit left them, before a later commit.
 */
export async function committedEvents(
  committed: Committed,
  records: CommittedRecords,
): Promise<WatchEvent[]> {
  const stored = <T>(record: T | undefined, what: string): T => {
    if (record === undefined) throw new Error(`${what} was committed but is not in the store`);
    return record;
  };
  const hold = (fireId: string, what: string) => records.hold(fireId).then((h) => stored(h, what));
  const events: Promise<WatchEvent>[] = [];
  for (const fire of committed.fires) {
    events.push(
      records
        .fire(fire.id)
        .then((f) => ({ event: { case: "ruleFired", value: stored(f, `fire ${fire.id}`) } })),
    );
    if (holdPlaced(fire) !== undefined)
      events.push(
        hold(fire.id, `the hold of fire ${fire.id}`).then((h) => ({ event: { case: "ruleHold", value: h } })),
      );
  }
  for (const r of committed.releases)
    events.push(
      hold(r.fireId, `the release of ${r.harness}'s hold by rule ${r.rule}`).then((h) => ({
        event: { case: "ruleHoldReleased", value: h },
      })),
    );
  return Promise.all(events);
}

/**
 * What hands each commit's events to WatchEvents' watchers. Each commit's records are read as it is
 * handed over, and its events published only after those of every commit before it, so watchers see
 * commits in commit order however the reads' answers come back. A failure to read a commit's events
 * back costs the watchers a gap in its place, not the rules their actions.
 */
export function commitPublisher(
  bus: Pick<EventBus<WatchEvent>, "watchers" | "publish" | "miss">,
  records: CommittedRecords,
  log: Log,
): (committed: Committed) => void {
  let published: Promise<void> = Promise.resolve();
  return (committed) => {
    if (bus.watchers === 0) return;
    // Settled into a value at once: a failed read is not left an unhandled rejection while it waits.
    const read = committedEvents(committed, records).then(
      (events) => ({ events }),
      (error: unknown) => ({ error }),
    );
    published = published.then(async () => {
      const r = await read;
      try {
        if ("error" in r) throw r.error;
        bus.publish(r.events);
      } catch (e) {
        bus.miss(eventCount(committed));
        log.error({ err: (e as Error).message }, "events not sent to watchers");
      }
    });
  };
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
