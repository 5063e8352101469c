/**
 * A fire's actions as lines, so that what the core planned and what live evaluation recorded in the
 * store compare line for line: `annotate <node>`, `notify`, `hold <harness>`, `stop <harness> <run>`.
 * The store keeps a stop's harness with the fire but not its run, which only the stop command is given;
 * a test that records the stop commands passes the runs they were given, others compare without.
 */
import type { FireAction } from "../../src/core/outcome.js";
import { actions, annotations, fires, holds, type StoreAt } from "../support/store-reads.js";

const ORDER = ["annotate", "notify", "hold", "stop"];
const byLevel = (a: string, b: string) =>
  ORDER.indexOf(a.split(" ")[0] as string) - ORDER.indexOf(b.split(" ")[0] as string);

function line(a: FireAction, stopRuns: boolean): string {
  switch (a.kind) {
    case "annotate":
      return `annotate ${a.node}`;
    case "notify":
      return "notify";
    case "hold":
      return `hold ${a.harness}`;
    case "stop":
      return stopRuns ? `stop ${a.harness} ${a.run}` : `stop ${a.harness}`;
  }
}

export const plannedLines = (actions: readonly FireAction[], stopRuns: boolean): string[] =>
  actions.map((a) => line(a, stopRuns));

/**
 * Each fire's recorded actions by fire id, in level order: its annotation, its recorded notify and
 * stop actions, the hold it placed; `stopRuns` by fire id when the test recorded the stop commands.
 */
export function recordedLines(store: StoreAt, stopRuns?: ReadonlyMap<string, string>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (id: string, line: string) => {
    out.set(id, [...(out.get(id) ?? []), line]);
  };
  for (const r of fires(store)) out.set(r.fire_id, []);
  for (const r of annotations(store)) add(r.fire_id, `annotate ${r.node}`);
  for (const r of holds(store)) add(r.fire_id, `hold ${r.harness}`);
  for (const r of actions(store)) {
    if (r.action === "notify") add(r.fire_id, "notify");
    else if (stopRuns === undefined) add(r.fire_id, `stop ${r.harness}`);
    else add(r.fire_id, `stop ${r.harness} ${stopRuns.get(r.fire_id)}`);
  }
  for (const lines of out.values()) lines.sort(byLevel);
  return out;
}
