/**
 * RuleService's GetStatus: the daemon's one status answer (`harness status`, `harness doctor`): the
 * journal's size and last row, admissions and drops since start, the evaluator's cursor and lag, the
 * rule set's counts and what disabled rules, stops that may not have run, the policy clones, a reload's
 * or a store write's failure.
 */
import { DAY } from "../../core/durations.js";
import type { RuleSet } from "../../core/rule-set.js";
import { ruleState, ruleStateCounts } from "../../core/rule-state.js";
import type { ReloadFailure } from "../daemon/daemon.js";
import type { RuleServiceDeps, RuleServiceImpl } from "./rule-service-deps.js";
import { serve } from "./status.js";

export function statusMethod(deps: RuleServiceDeps): RuleServiceImpl["getStatus"] {
  const { evaluator, reads } = deps;
  const bySource = async (counter: RuleServiceDeps["metrics"]["journalRows"]) =>
    (await counter.get()).values
      .map((v) => ({ source: String(v.labels.source ?? ""), rows: BigInt(v.value) }))
      .sort((a, b) => (a.source < b.source ? -1 : 1));
  return () =>
    serve("GetStatus", async () => {
      const now = deps.clock();
      const set = evaluator.rules;
      const current = evaluator.state;
      // Asked together: on SQLite each answers at once, so they are read as of one moment, as before. A
      // store that does not answer (a database gone away) is what the status must then say, not a
      // failed call: the evaluator's own figures stand in, and the store's failure is reported.
      let readFailure: Error | undefined;
      const [last, journalRows, undelivered, unknown] = await Promise.all([
        reads.journal.last(),
        reads.journalRows(),
        reads.stopsSince("undelivered", now - 7 * DAY),
        reads.stopsSince("unknown", now - 7 * DAY),
      ]).catch((e: Error) => {
        readFailure = e;
        return [{ seq: evaluator.cursor, at: 0 }, 0, 0, 0] as const;
      });
      const lead = await deps.leader().catch(() => undefined);
      const costExceeded = set.rules.flatMap((r) => {
        const s = ruleState(r, set, current);
        return s.state === "disabled" ? [{ r, ...s }] : [];
      });
      const counts = ruleStateCounts(set, current);
      return {
        version: deps.version,
        startedAtMs: BigInt(deps.startedAt),
        nowMs: BigInt(now),
        journalRows: BigInt(journalRows),
        lastSeq: BigInt(last.seq),
        lastAtMs: BigInt(last.at),
        admittedSinceStart: await bySource(deps.metrics.journalRows),
        droppedSinceStart: await bySource(deps.metrics.journalDropped),
        evaluatorCursor: BigInt(evaluator.cursor),
        lagSeconds: evaluator.lagSeconds(now),
        holdsActive: Object.keys(current.holds).length,
        rulesActive: counts.active,
        rulesShadow: counts.shadow,
        disabled: [
          ...set.disabled.map((d) => ({ name: d.name, reason: d.reason, message: d.message })),
          ...costExceeded.map((x) => ({
            name: x.r.rule.spec.name,
            reason: x.disabledReason,
            message: x.disabledMessage,
          })),
        ],
        unknownEnforced: [...set.unknownEnforced],
        enforcedDisabled: [
          ...set.disabled.filter((d) => set.unknownEnforced.includes(d.name)).map((d) => d.name),
          ...costExceeded.filter((x) => x.r.enforced).map((x) => x.r.rule.spec.name),
        ].sort(),
        enforced: set.rules
          .filter((r) => r.enforced)
          .map((r) => {
            const s = ruleState(r, set, current);
            return {
              name: r.rule.spec.name,
              declaredLevel: r.rule.spec.level,
              state: s.state,
              hash: r.rule.hash,
              pinned: set.pinned.includes(r.rule.spec.name),
              shadowUntilMs: BigInt(s.state === "shadow" ? (s.shadowUntil ?? 0) : 0),
            };
          }),
        stalePins: set.stalePins.map(stalePin),
        supervisorStopConfigured: deps.supervisorStopConfigured(),
        undeliveredStops7d: undelivered,
        unknownStops7d: unknown,
        policyClones: deps.policyClones().map((c) => ({ name: c.name, state: c.state, detail: c.detail })),
        needsRestart: [...deps.needsRestart()],
        ...reloadFailureFields(deps.lastReloadFailure?.()),
        ...storeWriteStatus(deps.storeWrite(), readFailure, now),
        leader: lead?.leader?.holder ?? "",
        leaderEpoch: BigInt(lead?.leader?.epoch ?? 0),
        leaderSinceMs: BigInt(lead?.leader?.since ?? 0),
        leaderExpiresAtMs: BigInt(lead?.leader?.expiresAt ?? 0),
        leading: lead?.leading ?? false,
        notLeadingReason: lead?.notLeading ?? "",
      };
    });
}

export const stalePin = (p: RuleSet["stalePins"][number]) => ({
  name: p.name,
  pinnedHash: p.pinned,
  loadedHash: p.loaded,
});

const reloadFailureFields = (f: ReloadFailure | undefined) =>
  f === undefined ? {} : { lastReloadError: f.error, lastReloadFailedAtMs: BigInt(f.at) };

/** The store's last write failure, else a read of this status that failed (reported the same way). */
const storeWriteStatus = (
  w: ReturnType<RuleServiceDeps["storeWrite"]>,
  readFailure: Error | undefined,
  now: number,
) => {
  const failure =
    w.failure ??
    (readFailure === undefined
      ? undefined
      : { error: `reading it failed: ${readFailure.message}`, sinceMs: now, failures: 1 });
  return {
    storePath: w.path,
    storeWriteError: failure?.error ?? "",
    storeWriteFailingSinceMs: BigInt(failure?.sinceMs ?? 0),
    storeWriteFailures: failure?.failures ?? 0,
  };
};
