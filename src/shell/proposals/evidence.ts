/**
 * What a proposal's evidence ids name (SPEC-0029 REQ-15: "an evidence id that resolves to nothing" is
 * refused), resolved against what the daemon's store holds, since the daemon holds no other copy of the
 * fleet. An id is one of (docs/proposals.md):
 * - a fire, `f-<seq>-<n>`: a row of the fire log;
 * - a journal row, `seq:<n>`: a row of the journal (one retention has not pruned);
 * - a run, `<harness>#<run id>`: a journal row or a fire of that run;
 * - a graph node, `<kind>:<key>` in the graph's canonical encoding: a node an annotation is kept by; the
 *   node of a run or harness the journal or fire log names (`run:…`, `harness:…`); the node of a file a
 *   journal row of its repo names (`file:<repo>:<path>`); or a graph row's `from` or `to`, or a fact
 *   row's `subject`.
 * Every check is served by an index (the last by the journal's expression indexes on from, to and
 * subject), so resolving an id never scans the journal.
 */
import { parseFireId } from "../../core/fire-id.js";
import { encodeComponent, fileNode, runNode } from "../../core/targets.js";
import type { StoreDoor } from "../store/store-door.js";

const JOURNAL_ROW = /^seq:([1-9][0-9]{0,15})$/;
const RUN = /^([^\s:#]+)#([^\s:#]+)$/;
const NODE = /^([a-z][a-z0-9_-]{0,31}):(\S+)$/;

/** Percent-decodes a key component; undefined when it is not valid percent-encoded UTF-8. */
function decoded(component: string): string | undefined {
  try {
    return decodeURIComponent(component);
  } catch {
    return undefined;
  }
}

/** The run a `run:` node names, when the id is that run's node in canonical form. */
function runOfNode(key: string): string | undefined {
  const hash = key.lastIndexOf("#");
  if (hash < 0) return undefined;
  const harness = decoded(key.slice(0, hash));
  const id = decoded(key.slice(hash + 1));
  if (harness === undefined || id === undefined) return undefined;
  const run = `${harness}#${id}`;
  return runNode(run) === `run:${key}` ? run : undefined;
}

function harnessOfNode(key: string): string | undefined {
  const harness = decoded(key);
  return harness !== undefined && encodeComponent(harness) === key ? harness : undefined;
}

function fileOfNode(key: string): { readonly repo: string; readonly path: string } | undefined {
  const colon = key.indexOf(":");
  if (colon < 0) return undefined;
  const repo = decoded(key.slice(0, colon));
  const parts = key
    .slice(colon + 1)
    .split("/")
    .map(decoded);
  if (repo === undefined || parts.some((p) => p === undefined)) return undefined;
  const path = parts.join("/");
  return fileNode(repo, path) === `file:${key}` ? { repo, path } : undefined;
}

/** Resolves evidence ids against the store, through the daemon's store door. */
export class EvidenceResolver {
  constructor(private readonly reads: StoreDoor["evidence"]) {}

  /** The first id, in the order given, that resolves to nothing; undefined when all resolve. */
  async firstUnresolved(ids: readonly string[]): Promise<string | undefined> {
    for (const id of ids) if (!(await this.resolves(id))) return id;
    return undefined;
  }

  private async resolves(id: string): Promise<boolean> {
    const { reads } = this;
    if (parseFireId(id) !== undefined) return reads.fire(id);
    const row = JOURNAL_ROW.exec(id);
    if (row !== null) return reads.journalRow(Number(row[1]));
    const run = RUN.exec(id);
    if (run !== null) return reads.run(run[1] as string, id);
    const node = NODE.exec(id);
    if (node === null) return false;
    if (await reads.annotated(id)) return true;
    const [kind, key] = [node[1] as string, node[2] as string];
    if (kind === "run") {
      const r = runOfNode(key);
      if (r !== undefined && (await reads.run(r.slice(0, r.lastIndexOf("#")), r))) return true;
    } else if (kind === "harness") {
      const h = harnessOfNode(key);
      if (h !== undefined && (await reads.harness(h))) return true;
    } else if (kind === "file") {
      const f = fileOfNode(key);
      if (f !== undefined && (await reads.file(f.repo, f.path))) return true;
    }
    return reads.graphNode(id);
  }
}
