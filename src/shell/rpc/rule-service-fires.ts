/**
 * RuleService's fire-log methods: ListFires (a filtered page, newest first, continued by before_seq, or
 * a forward page after a seq), ExplainFire (a fire with the row it was made on, if retention kept it; or
 * a guard's decision, `guard-decisions.ts`) and CountFires (fires per rule and hour), all read from the
 * store's fire log.
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { DAY, HOUR } from "../../core/durations.js";
import type { Level } from "../../core/rule-file.js";
import { levelDerivation } from "../../core/rule-state.js";
import { InvalidArgumentError, UnknownFireError } from "../errors.js";
import type { FireRow } from "../store/rule-reads.js";
import type { RuleReadsPort } from "../store/store-door.js";
import { explainGuard } from "./guard-decisions.js";
import { type FireInit, fireInfo, primitivesOf } from "./messages.js";
import { checkLength, limitOf, sinceOf, withinBudget } from "./requests.js";
import type { RuleServiceDeps, RuleServiceImpl } from "./rule-service-deps.js";
import { serve } from "./status.js";

/** What of a fire counts against a response's budget. */
const fireText = (r: FireRow): string[] => [r.message, r.target_key ?? "", r.harness ?? "", r.run ?? ""];

export function fireMethods(
  deps: Pick<RuleServiceDeps, "evaluator" | "reads" | "clock">,
): Pick<RuleServiceImpl, "listFires" | "explainFire" | "countFires"> {
  const { reads } = deps;
  return {
    listFires: (req) =>
      serve("ListFires", async () => {
        const limit = limitOf(req.limit, "fire");
        checkLength(req.rule, "rule");
        checkLength(req.harness, "harness");
        const sinceMs = sinceOf(req.sinceMs);
        if (req.afterSeq !== undefined) {
          if (req.rule !== "" || req.harness !== "" || sinceMs !== 0)
            throw new InvalidArgumentError("", "ListFires with after_seq takes no rule, harness or since_ms");
          const page = await firesForward(reads, sinceOf(req.afterSeq), limit);
          return { ...page, fires: await withActions(reads, page.fires) };
        }
        const filter = {
          ...(req.rule === "" ? {} : { rule: req.rule }),
          ...(req.harness === "" ? {} : { harness: req.harness }),
          sinceMs,
        };
        const page = await firesBackward(reads, filter, req.beforeSeq, limit);
        return { ...page, fires: await withActions(reads, page.fires) };
      }),

    explainFire: (req) =>
      serve(`ExplainFire ${req.fireId}`, async () => {
        checkLength(req.fireId, "fire id");
        const row = await reads.fire(req.fireId);
        if (row === undefined) {
          const guard = await explainGuard(reads, req.fireId);
          if (guard !== undefined) return guard;
          throw new UnknownFireError(req.fireId);
        }
        const [journalRow, actions] = await Promise.all([
          reads.journalRow(row.seq),
          reads.actions(row.fire_id),
        ]);
        const loaded = deps.evaluator.rules.rules.find(
          (r) => r.rule.spec.name === row.rule && r.rule.hash === row.hash,
        );
        return {
          fire: fireInfo(row, actions),
          when: loaded?.rule.normalizedWhen ?? "",
          ...(journalRow === undefined
            ? { rowPruned: true }
            : {
                row: {
                  seq: BigInt(journalRow.seq),
                  kind: journalRow.kind,
                  type: journalRow.type,
                  atMs: BigInt(journalRow.at),
                  source: journalRow.source,
                  event: JSON.parse(journalRow.event) as JsonObject,
                },
              }),
          // `now` is the row's admission time (REQ-7), which the fire keeps even when the row is gone.
          nowMs: BigInt(row.at),
          primitives: primitivesOf(row),
          levelDerivation: levelDerivation(
            row.declared_level as Level,
            row.effective_level as Level,
            row.mode === "shadow",
          ),
        };
      }),

    countFires: (req) =>
      serve("CountFires", async () => {
        const since = sinceOf(req.sinceMs);
        if (since > 7 * DAY)
          throw new InvalidArgumentError("", `since_ms ${since} is longer than the 7 days CountFires counts`);
        const now = deps.clock();
        const fromMs = Math.floor((now - (since === 0 ? DAY : since)) / HOUR) * HOUR;
        return {
          counts: (await reads.fireCounts(fromMs)).map((c) => ({
            rule: c.rule,
            mode: c.mode,
            hourMs: BigInt(c.hour),
            fires: c.fires,
          })),
          nowMs: BigInt(now),
          fromMs: BigInt(fromMs),
        };
      }),
  };
}

type FireFilter = Parameters<RuleReadsPort["fires"]>[0];

/** Each fire with its actions, read one fire after another. */
async function withActions(reads: RuleReadsPort, fires: readonly FireRow[]): Promise<FireInit[]> {
  const out: FireInit[] = [];
  for (const r of fires) out.push(fireInfo(r, await reads.actions(r.fire_id)));
  return out;
}

/**
 * One page of the filtered fire log, newest first, before `beforeSeq` when set: at most `limit` fires
 * within the response budget. A truncated page is cut at a row boundary so that `next_before_seq`
 * loses no fire; a row with more fires than fit is carried whole.
 */
async function firesBackward(
  reads: RuleReadsPort,
  filter: FireFilter,
  beforeSeq: bigint | undefined,
  limit: number,
) {
  const bounded = beforeSeq === undefined ? filter : { ...filter, beforeSeq: sinceOf(beforeSeq) };
  const rows = await reads.fires(bounded, limit + 1);
  const budget = withinBudget(rows, limit, fireText);
  if (!budget.truncated) return { fires: budget.kept, truncated: false };
  const cut = (rows[budget.kept.length] as FireRow).seq;
  const whole = budget.kept.filter((r) => r.seq !== cut);
  // A row's fires commit together, so the seq's fires read now are those the first read was cut in.
  const fires =
    whole.length > 0
      ? whole
      : (await reads.fires({ ...filter, beforeSeq: cut + 1 }, (await reads.firesAtSeq(cut)).length)).filter(
          (r) => r.seq === cut,
        );
  return { fires, truncated: true, nextBeforeSeq: BigInt((fires[fires.length - 1] as FireRow).seq) };
}

/**
 * One forward page of the fire log after `afterSeq`: at most `limit` fires within the response budget,
 * cut at a row boundary so that `next_after_seq` loses no fire; a row with more fires than fit (more
 * than `limit` rules fired on it) is carried whole.
 */
async function firesForward(reads: RuleReadsPort, afterSeq: number, limit: number) {
  const rows = await reads.firesAfterSeq(afterSeq, limit + 1);
  const budget = withinBudget(rows, limit, fireText);
  let fires: FireRow[] = budget.kept;
  if (budget.truncated) {
    const cut = rows[fires.length] as FireRow;
    const whole = fires.filter((r) => r.seq !== cut.seq);
    fires = whole.length > 0 ? whole : await reads.firesAtSeq(cut.seq);
  }
  const last = fires[fires.length - 1];
  const more =
    budget.truncated && (last === undefined || (await reads.firesAfterSeq(last.seq, 1)).length > 0);
  return { fires, truncated: more, nextAfterSeq: BigInt(last?.seq ?? afterSeq) };
}
