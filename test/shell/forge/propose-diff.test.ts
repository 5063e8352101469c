/**
 * The pull request body's "Against the loaded version" (beyond SPEC-0029 REQ-16): a proposal that
 * replaces a loaded rule lists the fires it adds and removes over the same rows, capped, with counts.
 * One forge suffices: the body is the pass's, not the forge's.
 */
import { afterAll, expect, it } from "vitest";
import type { ReplayedFire } from "../../../src/core/backtest.js";
import { MAX_DIFF_ROWS, pullBody } from "../../../src/shell/forge/pull-body.js";
import { ProposeWorld } from "./propose-fixture.js";

let world: ProposeWorld | undefined;
afterAll(async () => {
  await world?.dispose();
});

/** The body's lines from `### Against the loaded version` to its end. */
const againstOf = (body: string): string => body.slice(body.indexOf("### Against the loaded version"));

it("the PR body lists the fires a proposal adds and removes against the loaded rule", async () => {
  const w = await ProposeWorld.start("github");
  world = w;
  // The world's journal: nightly#1..3 closed over budget. The starter rule budget-exhaustion-recurring
  // fires once, on nightly#2, at the harness (its 6h cooldown keeps nightly#3 silent); the proposal of
  // that name fires on each of the three, at the run: three added, the starter's one removed.
  await w.propose("budget-exhaustion-recurring");
  const r = await w.run();
  expect(r.code, r.stderr).toBe(0);
  const body = w.forge.pulls[0]?.body ?? "";
  expect(body).toContain("### Against the loaded version");
  const section = againstOf(body);
  expect(section).toMatch(
    /^`budget-exhaustion-recurring` is loaded now from the embedded starter pack \(content hash `[0-9a-f]{12}`\); it had 1 fire over the same rows\. Replayed beside it in the same pass and matched by row and target, this version adds 3 fires and removes 1; `harness rules backtest --diff rules\/budget-exhaustion-recurring\.toml` shows all\.$/m,
  );
  const added = section.slice(section.indexOf("#### Added"), section.indexOf("#### Removed"));
  const removed = section.slice(section.indexOf("#### Removed"));
  expect(added).toContain("#### Added: this version fires, the loaded one does not (3 of 3)");
  for (const n of [1, 2, 3])
    expect(added).toMatch(
      new RegExp(`run nightly#${n}\\s+notify\\s+nightly: nightly#${n} closed over budget$`, "m"),
    );
  expect(removed).toContain("#### Removed: the loaded version fires, this one does not (1 of 1)");
  expect(removed).toMatch(
    /harness nightly\s+notify\s+nightly exceeded its budget twice in 24h \(last run nightly#2\)$/m,
  );
  // The removed fire is on nightly#2's row, which the proposal fires on too, at another target.
  const seqOf = (text: string, run: string) => new RegExp(`^\\S+\\s+(\\d+)\\s.*${run}`, "m").exec(text)?.[1];
  expect(seqOf(removed, "last run nightly#2")).toBe(seqOf(added, "run nightly#2"));

  // A proposal of a name no rule has: no such section.
  await w.reset();
  await w.propose("budget-notify");
  expect((await w.run()).code).toBe(0);
  expect(w.forge.pulls[0]?.body ?? "").not.toContain("### Against the loaded version");
}, 90_000);

it("the loaded-version lists are capped at 50 each, with the counts, and withhold on a public repo", () => {
  const fire = (seq: number, message: string): ReplayedFire => ({
    seq,
    at: Date.UTC(2026, 0, 1) + seq * 1000,
    kind: "run_event",
    type: "closed",
    target: { kind: "node", key: `file:org/app:src/${seq}.ts` },
    declaredLevel: "notify",
    level: "notify",
    mode: "shadow",
    message,
  });
  const added = Array.from({ length: MAX_DIFF_ROWS + 7 }, (_, i) => fire(i + 1, `added ${i + 1}`));
  const input = {
    proposalId: "p-1",
    name: "churn",
    expressionHash: "ab".repeat(32),
    run: "miner#1",
    on: "run_event",
    level: "notify",
    target: "node",
    description: "d",
    message: "{{run}} churned",
    rationale: "r",
    evidence: [],
    backtest: { sinceMs: 30 * 86_400_000, rows: 100, fires: added.length, evalErrors: 0, storeErrors: 0 },
    fires: added,
    public: false,
    shadowPeriodMs: 0,
    against: {
      hash: "cd".repeat(32),
      source: { kind: "policy", repo: "ops" } as const,
      fires: 1,
      added,
      removed: [fire(1000, "removed in src/secret.ts @alice")],
    },
  };
  const section = againstOf(pullBody(input));
  expect(section).toContain("is loaded now from the policy repo `ops` (content hash `cdcdcdcdcdcd`)");
  expect(section).toContain(
    `#### Added: this version fires, the loaded one does not (50 of ${MAX_DIFF_ROWS + 7})`,
  );
  expect(section).toContain("\n7 more not listed.");
  expect(section).toContain("added 50\n");
  expect(section).not.toContain("added 51");
  // Agent text is neutralised as everywhere in the body: the mention pings no one.
  expect(section).toContain("removed in src/secret.ts \uff20alice");
  const open = againstOf(pullBody({ ...input, public: true }));
  expect(open).not.toContain("src/secret.ts");
  expect(open).toContain("node (withheld)");
  expect(open).toContain("(withheld: the loaded rule's message may name a repo, branch or path)");
});
