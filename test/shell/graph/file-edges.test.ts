/**
 * The file-edge projector's collisions are between runs, whatever their harnesses: two sessions of one
 * project (one harness) editing one file collide, and the collision ends when fewer than two runs hold
 * the file (docs/decisions/0006-the-agent-hears-the-rules.md).
 */
import { describe, expect, it } from "vitest";
import type { EventFields, JournalRow } from "../../../src/core/journal.js";
import type { DerivedRow } from "../../../src/shell/derive/deriver.js";
import { FileEdgeProjector } from "../../../src/shell/graph/file-edges.js";

const REPO = "forge.example/org/reduit";
let seq = 0;
const row = (event: EventFields): JournalRow => {
  seq += 1;
  return { seq, at: 1_000 * seq, kind: "run_event", event };
};
const base = (run: string) => ({ harness: run.split("#")[0], run, adapter: "claude-code", hook_fed: true });
const edit = (run: string, ...paths: string[]) =>
  row({ type: "tool", ...base(run), tool: "Edit", action: "edit", repo: REPO, branch: "main", paths });
const close = (run: string) => row({ type: "closed", ...base(run), outcome: "success" });

const collisions = (rows: readonly DerivedRow[] | undefined) =>
  (rows ?? []).filter((r) => r.event.type === "collision_started" || r.event.type === "collision_ended");

describe("collisions between concurrent runs", () => {
  it("two sessions of one harness editing one path start a collision naming both runs and the one harness", () => {
    const p = new FileEdgeProjector(() => true);
    expect(collisions(p.derive(edit("proj#s1", "src/a.ts"))?.rows)).toEqual([]);
    expect(collisions(p.derive(edit("proj#s2", "src/a.ts"))?.rows)).toEqual([
      {
        source: "graph",
        kind: "graph_event",
        event: {
          type: "collision_started",
          scope: "file",
          repo: REPO,
          branch: "main",
          path: "src/a.ts",
          harness: "proj",
          run: "proj#s2",
          harnesses: ["proj"],
          runs: ["proj#s1", "proj#s2"],
        },
      },
    ]);
  });

  it("a collision of three runs ends only when fewer than two runs hold the file", () => {
    const p = new FileEdgeProjector(() => true);
    p.derive(edit("proj#s1", "src/a.ts"));
    p.derive(edit("proj#s2", "src/a.ts"));
    expect(collisions(p.derive(edit("other#s3", "src/a.ts"))?.rows), "already open").toEqual([]);
    expect(collisions(p.derive(close("proj#s1"))?.rows), "two runs still hold it").toEqual([]);
    expect(collisions(p.derive(close("other#s3"))?.rows).map((r) => r.event)).toMatchObject([
      { type: "collision_ended", run: "other#s3", harnesses: ["proj"], runs: ["proj#s2"] },
    ]);
  });

  it("one run editing a file twice is no collision", () => {
    const p = new FileEdgeProjector(() => true);
    p.derive(edit("proj#s1", "src/a.ts"));
    expect(p.derive(edit("proj#s1", "src/a.ts"))).toBeUndefined();
  });
});
