/**
 * The file-edge projector (`[graph] project_file_edges`, default on): the fleet graph that
 * would send graph_event rows is not in this repository, so the daemon derives the ones the starter
 * rules `same-file-collision` and `cross-run-churn` need from hook-fed runs' committed rows (source
 * `graph`, node ids encoded as `core/targets.ts` does):
 *
 * - `edge_added` `edited` (run → file) the first time a run's edit tool row names a repo and path;
 * - `collision_started` (scope `file`) when two or more runs hold open `edited` edges on one repo and
 *   path, whatever their harnesses, naming the run and harness whose edit started it, and every holder;
 * - `edge_ended` for each of a run's edges when its `closed` row comes;
 * - `collision_ended` when fewer than two runs remain, naming the run whose close ended it.
 *
 * Runs, not harnesses, collide: one project install is one harness, and two sessions in one checkout
 * editing one file is the commonest collision (docs/decisions/0006-the-agent-hears-the-rules.md).
 */
import { isHookFed } from "../../core/hook-runs.js";
import type { EventFields, JournalRow } from "../../core/journal.js";
import { MAX_PARTICIPANTS } from "../../core/kinds.js";
import { fileNode, runNode } from "../../core/targets.js";
import type { Derived, DerivedRow, Deriver } from "../derive/deriver.js";
import { EndedRuns } from "../derive/ended-runs.js";

interface Edge {
  readonly repo: string;
  readonly path: string;
  readonly branch: string | undefined;
  readonly harness: string;
}

/** One file's holders: run → harness, in the order they started editing it. */
interface FileState {
  readonly repo: string;
  readonly path: string;
  readonly holders: Map<string, string>;
  collision: boolean;
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");
const fileKey = (repo: string, path: string): string => `${repo}\u0000${path}`;

export class FileEdgeProjector implements Deriver {
  readonly name = "file-edges";
  readonly kinds = ["run_event"] as const;
  /** Edges each open run holds, by file key. */
  private runs = new Map<string, Map<string, Edge>>();
  private files = new Map<string, FileState>();
  /**
   * Runs closed: a late edit row of a closed run (a PostToolUse after its SessionEnd) adds no edge that
   * nothing would end.
   */
  private readonly ended = new EndedRuns();

  constructor(readonly enabled: () => boolean) {}

  reset(): void {
    this.runs = new Map();
    this.files = new Map();
    this.ended.clear();
  }

  derive(row: JournalRow): Derived | undefined {
    const e = row.event;
    const run = str(e.run);
    if (run === "") return undefined;
    if (e.type === "closed") return this.close(run);
    if (e.type !== "tool" || e.action !== "edit" || !isHookFed(e) || this.ended.has(run)) return undefined;
    const repo = str(e.repo);
    const harness = str(e.harness);
    const paths = Array.isArray(e.paths)
      ? e.paths.filter((p): p is string => typeof p === "string" && p !== "")
      : [];
    if (repo === "" || harness === "" || paths.length === 0) return undefined;
    const branch = typeof e.branch === "string" && e.branch !== "" ? e.branch : undefined;
    const rows: DerivedRow[] = [];
    let edges = this.runs.get(run);
    for (const path of paths) {
      const key = fileKey(repo, path);
      if (edges?.has(key) === true) continue;
      if (edges === undefined) {
        edges = new Map();
        this.runs.set(run, edges);
      }
      edges.set(key, { repo, path, branch, harness });
      rows.push(graphRow(edgeEvent("edge_added", run, { repo, path, branch, harness })));
      let file = this.files.get(key);
      if (file === undefined) {
        file = { repo, path, holders: new Map(), collision: false };
        this.files.set(key, file);
      }
      file.holders.set(run, harness);
      if (!file.collision && file.holders.size >= 2) {
        file.collision = true;
        rows.push(collisionRow("collision_started", file, run, harness, branch));
      }
    }
    return rows.length === 0 ? undefined : { rows };
  }

  private close(run: string): Derived | undefined {
    this.ended.add(run);
    const edges = this.runs.get(run);
    if (edges === undefined) return undefined;
    this.runs.delete(run);
    const rows: DerivedRow[] = [];
    for (const [key, edge] of edges) {
      rows.push(graphRow(edgeEvent("edge_ended", run, edge)));
      const file = this.files.get(key);
      if (file === undefined) continue;
      file.holders.delete(run);
      if (file.collision && file.holders.size < 2) {
        file.collision = false;
        rows.push(collisionRow("collision_ended", file, run, edge.harness, edge.branch));
      }
      if (file.holders.size === 0) this.files.delete(key);
    }
    return { rows };
  }
}

function edgeEvent(type: "edge_added" | "edge_ended", run: string, edge: Edge): EventFields {
  return {
    type,
    edge: "edited",
    from: runNode(run),
    to: fileNode(edge.repo, edge.path),
    repo: edge.repo,
    ...(edge.branch === undefined ? {} : { branch: edge.branch }),
    path: edge.path,
    harness: edge.harness,
    run,
  };
}

/** `harnesses` and `runs` are the file's holders (at most `MAX_PARTICIPANTS` each, in name order). */
function collisionRow(
  type: "collision_started" | "collision_ended",
  file: FileState,
  run: string,
  harness: string,
  branch: string | undefined,
): DerivedRow {
  const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort().slice(0, MAX_PARTICIPANTS);
  return graphRow({
    type,
    scope: "file",
    repo: file.repo,
    ...(branch === undefined ? {} : { branch }),
    path: file.path,
    harness,
    run,
    harnesses: sorted(file.holders.values()),
    runs: sorted(file.holders.keys()),
  });
}

const graphRow = (event: EventFields): DerivedRow => ({ source: "graph", kind: "graph_event", event });
