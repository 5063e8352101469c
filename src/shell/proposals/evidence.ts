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
import { encodeComponent, fileNode, runNode } from "../../core/targets.js";
import type { Db } from "../store/open-store.js";

const FIRE = /^f-[0-9]{1,16}-[0-9]{1,6}$/;
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

/** Resolves evidence ids against the store, on the daemon's connection. */
export class EvidenceResolver {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      fire: db.prepare("SELECT 1 FROM rule_fires WHERE fire_id = ?"),
      row: db.prepare("SELECT 1 FROM rule_journal WHERE seq = ?"),
      runRow: db.prepare(
        "SELECT 1 FROM rule_journal WHERE kind IN ('run_event', 'graph_event', 'fact_event') AND harness = ? AND run = ? LIMIT 1",
      ),
      runFire: db.prepare("SELECT 1 FROM rule_fires WHERE harness = ? AND run = ? LIMIT 1"),
      harnessRow: db.prepare(
        "SELECT 1 FROM rule_journal WHERE kind IN ('run_event', 'graph_event', 'fact_event') AND harness = ? LIMIT 1",
      ),
      harnessFire: db.prepare("SELECT 1 FROM rule_fires WHERE harness = ? LIMIT 1"),
      file: db.prepare(
        "SELECT 1 FROM rule_journal_paths p JOIN rule_journal j ON j.seq = p.seq WHERE p.path = ? AND j.repo = ? LIMIT 1",
      ),
      annotated: db.prepare("SELECT 1 FROM rule_annotations WHERE node = ? LIMIT 1"),
      // Each matches its partial expression index (schema V3), so none scans the journal.
      edgeFrom: db.prepare(
        "SELECT 1 FROM rule_journal WHERE kind = 'graph_event' AND json_extract(event, '$.from') = ? LIMIT 1",
      ),
      edgeTo: db.prepare(
        "SELECT 1 FROM rule_journal WHERE kind = 'graph_event' AND json_extract(event, '$.to') = ? LIMIT 1",
      ),
      factSubject: db.prepare(
        "SELECT 1 FROM rule_journal WHERE kind = 'fact_event' AND json_extract(event, '$.subject') = ? LIMIT 1",
      ),
    };
  }

  /** The first id, in the order given, that resolves to nothing; undefined when all resolve. */
  firstUnresolved(ids: readonly string[]): string | undefined {
    return ids.find((id) => !this.resolves(id));
  }

  private resolves(id: string): boolean {
    if (FIRE.test(id)) return this.stmts.fire.get(id) !== undefined;
    const row = JOURNAL_ROW.exec(id);
    if (row !== null) return this.stmts.row.get(Number(row[1])) !== undefined;
    const run = RUN.exec(id);
    if (run !== null) return this.runExists(run[1] as string, id);
    const node = NODE.exec(id);
    if (node === null) return false;
    if (this.stmts.annotated.get(id) !== undefined) return true;
    const [kind, key] = [node[1] as string, node[2] as string];
    if (kind === "run") {
      const r = runOfNode(key);
      if (r !== undefined && this.runExists(r.slice(0, r.lastIndexOf("#")), r)) return true;
    } else if (kind === "harness") {
      const h = harnessOfNode(key);
      if (h !== undefined && (this.stmts.harnessRow.get(h) ?? this.stmts.harnessFire.get(h)) !== undefined)
        return true;
    } else if (kind === "file") {
      const f = fileOfNode(key);
      if (f !== undefined && this.stmts.file.get(f.path, f.repo) !== undefined) return true;
    }
    return (
      (this.stmts.edgeFrom.get(id) ?? this.stmts.edgeTo.get(id) ?? this.stmts.factSubject.get(id)) !==
      undefined
    );
  }

  private runExists(harness: string, run: string): boolean {
    return (this.stmts.runRow.get(harness, run) ?? this.stmts.runFire.get(harness, run)) !== undefined;
  }
}
