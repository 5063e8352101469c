/**
 * ListFires' newest-first pages (the MCP gateway's list_fires cursor): whatever the fire log (rows with
 * one or several fires, of several rules and harnesses), the filter and the page size, following
 * `next_before_seq` from the first page yields the fire log newest first, each fire once, and every
 * truncated page ends at a row boundary.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fireMethods } from "../../../src/shell/rpc/rule-service-fires.js";
import type { FireRow } from "../../../src/shell/store/rule-reads.js";
import type { RuleReadsPort } from "../../../src/shell/store/store-door.js";
import { runs } from "../../property-runs.js";

const RULES = ["a", "b", "c"];
const HARNESSES = ["h1", "h2"];

/** The store's fire reads over a fire log held in memory, ordered as the store orders them. */
function readsOver(log: readonly FireRow[]): RuleReadsPort {
  const newestFirst = [...log].reverse();
  return {
    fires: async (filter: Parameters<RuleReadsPort["fires"]>[0], limit: number) =>
      newestFirst
        .filter(
          (f) =>
            (filter.rule === undefined || f.rule === filter.rule) &&
            (filter.harness === undefined || f.harness === filter.harness) &&
            f.at >= filter.sinceMs &&
            (filter.beforeSeq === undefined || f.seq < filter.beforeSeq),
        )
        .slice(0, limit),
    firesAtSeq: async (seq: number) => log.filter((f) => f.seq === seq),
    actions: async () => [],
  } as unknown as RuleReadsPort;
}

const fire = (seq: number, n: number, rule: string, harness: string): FireRow => ({
  fire_id: `f-${seq}-${n}`,
  seq,
  at: seq * 1000,
  rule,
  hash: `hash-${rule}`,
  kind: "run_event",
  type: "closed",
  target_kind: "harness",
  target_key: harness,
  harness,
  run: `${harness}#${seq}`,
  declared_level: "notify",
  effective_level: "notify",
  mode: "active",
  action: "notify",
  message: `${rule} fired on ${harness}`,
  primitives: "[]",
});

/** A fire log in store order: rows by seq, each with 1 to 4 fires. */
const fireLog = fc
  .array(
    fc.record({
      gap: fc.integer({ min: 1, max: 3 }),
      fires: fc.array(
        fc.record({ rule: fc.constantFrom(...RULES), harness: fc.constantFrom(...HARNESSES) }),
        { minLength: 1, maxLength: 4 },
      ),
    }),
    { maxLength: 30 },
  )
  .map((rows) => {
    let seq = 0;
    return rows.flatMap((r) => {
      seq += r.gap;
      const at = seq;
      return r.fires.map((f, n) => fire(at, n, f.rule, f.harness));
    });
  });

describe("ListFires newest first", () => {
  it("pages followed by next_before_seq join into the filtered log, newest first, each page ending at a row boundary", async () => {
    await fc.assert(
      fc.asyncProperty(
        fireLog,
        fc.integer({ min: 1, max: 6 }),
        fc.option(fc.constantFrom(...RULES), { nil: undefined }),
        fc.option(fc.constantFrom(...HARNESSES), { nil: undefined }),
        async (log, limit, rule, harness) => {
          const { listFires } = fireMethods({
            reads: readsOver(log),
            evaluator: undefined as never,
            clock: () => 0,
          });
          const want = [...log]
            .reverse()
            .filter(
              (f) =>
                (rule === undefined || f.rule === rule) && (harness === undefined || f.harness === harness),
            )
            .map((f) => f.fire_id);
          const got: string[] = [];
          let before: bigint | undefined;
          for (let page = 0; page <= log.length; page++) {
            const r = await listFires(
              {
                rule: rule ?? "",
                harness: harness ?? "",
                sinceMs: 0n,
                limit,
                ...(before === undefined ? {} : { beforeSeq: before }),
              } as Parameters<typeof listFires>[0],
              undefined as never,
            );
            const fires = (r.fires ?? []).map((f) => f.fireId as string);
            got.push(...fires);
            if (!r.truncated) break;
            const seqs = (r.fires ?? []).map((f) => Number(f.seq));
            // A truncated page ends at a row boundary: no fire of its last row is left for the next page.
            expect(log.filter((f) => f.seq === seqs.at(-1)).map((f) => f.fire_id)).toEqual(
              expect.arrayContaining(fires.filter((_, i) => seqs[i] === seqs.at(-1))),
            );
            expect(want.slice(got.length).every((id) => Number(id.split("-")[1]) < (seqs.at(-1) ?? 0))).toBe(
              true,
            );
            before = r.nextBeforeSeq;
          }
          expect(got).toEqual(want);
        },
      ),
      { numRuns: runs(200) },
    );
  });
});
