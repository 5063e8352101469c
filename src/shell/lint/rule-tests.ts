/**
 * A policy repo's rule tests (`tests/<name>.toml`, format in docs/policy-repo.md): each case is a short
 * journal (rows with their admission times) and the fires the rule must produce on it, as (seq, target)
 * pairs, or none. Lint runs each case through the core's own `fold` (what live evaluation and backtest
 * run), over a scan of the case's rows as the window, starting with no cooldowns, no holds and no
 * shadow; a case whose fires differ, or that meets an evaluation error, fails at the case's line.
 */
import { parse as parseToml, TomlDate, TomlError } from "smol-toml";
import { admissionProblems } from "../../core/admission.js";
import { fold } from "../../core/backtest.js";
import type { LoadedRule } from "../../core/compile-rule.js";
import { indexRow, type JournalRow } from "../../core/journal.js";
import { EVENT_KINDS, type EventKind, isEventKind } from "../../core/kinds.js";
import { activeRule, ruleSetOf } from "../../core/rule-set.js";
import { emptyState } from "../../core/state.js";
import { tomlErrorMessage } from "../../core/toml-error.js";
import { scanReader } from "../../core/window.js";
import { isTable, type TomlTable } from "../config/toml-document.js";
import type { Position } from "../config/toml-positions.js";
import { arrayTableHeaders } from "./array-table-headers.js";
import { type Finding, finding } from "./findings.js";

/** A test file is data for a few cases; 1 MiB and 10,000 rows bound what one file can make lint do. */
export const MAX_TEST_FILE_BYTES = 1024 * 1024;
export const MAX_TEST_ROWS = 10_000;

const CASE_KEYS = ["name", "rows", "fires"] as const;
const FIRE_KEYS = ["seq", "target"] as const;

interface ExpectedFire {
  readonly seq: number;
  readonly target: string;
}

interface TestCase {
  readonly name: string;
  readonly at: Position | undefined;
  readonly rows: readonly JournalRow[];
  readonly fires: readonly ExpectedFire[];
}

/** The findings of one test file for the rule it names (`undefined` when that rule did not load). */
export function runRuleTests(
  file: string,
  text: string,
  rule: LoadedRule | undefined,
  ruleFile: string,
): Finding[] {
  let doc: TomlTable;
  try {
    doc = parseToml(text);
  } catch (e) {
    const message = tomlErrorMessage(e, text);
    return [finding(file, e instanceof TomlError ? e : undefined, "error", "test_format", message)];
  }
  if (rule === undefined)
    return [finding(file, undefined, "notice", "test_format", `not run: ${ruleFile} does not load`)];
  const parsed = parseCases(file, text, doc, rule.spec.on);
  if (!Array.isArray(parsed)) return [parsed];
  return parsed.flatMap((c) => runCase(file, c, rule));
}

function parseCases(file: string, text: string, doc: TomlTable, on: EventKind): TestCase[] | Finding {
  const bad = (at: Position | undefined, message: string) =>
    finding(file, at, "error", "test_format", message);
  for (const k of Object.keys(doc))
    if (k !== "case") return bad(undefined, `unknown key ${k} (a test file holds only [[case]] tables)`);
  const cases = doc.case;
  if (!Array.isArray(cases) || cases.length === 0 || !cases.every(isTable))
    return bad(undefined, "a test file needs at least one [[case]] table");
  const headers = arrayTableHeaders(text, "case");
  const out: TestCase[] = [];
  let total = 0;
  for (const [i, c] of (cases as TomlTable[]).entries()) {
    const at = headers.length === cases.length ? headers[i] : undefined;
    const what = `case ${i + 1}`;
    for (const k of Object.keys(c))
      if (!(CASE_KEYS as readonly string[]).includes(k))
        return bad(at, `${what}: unknown key ${k} (allowed: ${CASE_KEYS.join(", ")})`);
    if (typeof c.name !== "string" || c.name === "") return bad(at, `${what} needs a name`);
    const label = `case ${JSON.stringify(c.name)}`;
    if (!Array.isArray(c.rows) || c.rows.length === 0)
      return bad(at, `${label} needs rows, a list of events`);
    total += c.rows.length;
    if (total > MAX_TEST_ROWS) return bad(at, `${label}: a test file may hold at most ${MAX_TEST_ROWS} rows`);
    const rows: JournalRow[] = [];
    for (const [j, r] of (c.rows as unknown[]).entries()) {
      const row = parseRow(r, j + 1, on, rows[rows.length - 1]?.at);
      if (typeof row === "string") return bad(at, `${label}, row ${j + 1}: ${row}`);
      rows.push(row);
    }
    if (!Array.isArray(c.fires))
      return bad(at, `${label} needs fires, a list of { seq, target } ([] when the rule must not fire)`);
    const fires: ExpectedFire[] = [];
    for (const [j, f] of (c.fires as unknown[]).entries()) {
      if (!isTable(f)) return bad(at, `${label}, fire ${j + 1} must be { seq = N, target = "..." }`);
      const unknown = Object.keys(f).find((k) => !(FIRE_KEYS as readonly string[]).includes(k));
      if (unknown !== undefined)
        return bad(at, `${label}, fire ${j + 1}: unknown key ${unknown} (allowed: seq, target)`);
      if (typeof f.seq !== "number" || !Number.isInteger(f.seq) || f.seq < 1 || f.seq > rows.length)
        return bad(at, `${label}, fire ${j + 1}: seq must be a row number from 1 to ${rows.length}`);
      if (typeof f.target !== "string")
        return bad(at, `${label}, fire ${j + 1} needs a target (the cooldown key)`);
      fires.push({ seq: f.seq, target: f.target });
    }
    out.push({ name: c.name, at, rows, fires });
  }
  return out;
}

/** One row of a case: `admitted` (the journal's clock), an optional `kind`, and the event's fields. */
function parseRow(r: unknown, seq: number, on: EventKind, previous: number | undefined): JournalRow | string {
  if (!isTable(r))
    return 'a row must be an inline table such as { admitted = 2026-10-01T09:00:00Z, type = "closed" }';
  const { admitted, kind = on, ...fields } = r;
  if (!(admitted instanceof TomlDate) || !admitted.isDateTime() || admitted.isLocal())
    return "admitted must be a date-time with an offset, such as 2026-10-01T09:00:00Z";
  if (typeof kind !== "string" || !isEventKind(kind)) return `kind must be one of ${EVENT_KINDS.join(", ")}`;
  const at = admitted.getTime();
  if (previous !== undefined && at < previous)
    return "admitted must not go back in time (the journal's clock never does)";
  const event: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (v instanceof TomlDate) {
      if (!v.isDateTime() || v.isLocal()) return `${k} must be a date-time with an offset`;
      event[k] = v.getTime();
    } else event[k] = v;
  }
  const problems = admissionProblems(kind, event);
  if (problems.length > 0) return `the journal would refuse it: ${problems.map((p) => p.message).join("; ")}`;
  return { seq, at, kind, event: event as JournalRow["event"] };
}

const pair = (f: ExpectedFire) => `(${f.seq}, ${JSON.stringify(f.target)})`;
const list = (fs: readonly ExpectedFire[]) => (fs.length === 0 ? "no fire" : fs.map(pair).join(" "));

function runCase(file: string, c: TestCase, rule: LoadedRule): Finding[] {
  const ruleSet = ruleSetOf({
    rules: [activeRule(rule, { kind: "policy", repo: "checkout" }, false)],
    disabled: [],
    shadowPeriod: 0,
    unknownEnforced: [],
    stalePins: [],
    pinned: [],
  });
  const indexed = c.rows.map(indexRow);
  const { outcomes } = fold(ruleSet, c.rows, emptyState, (row) => scanReader(indexed, row.seq, row.at));
  const errors = outcomes.flatMap((o, i) =>
    o.evaluations
      .filter((e) => e.result === "eval_error" || e.result === "store_error" || e.result === "cost_exceeded")
      .map((e) => `row ${i + 1}: ${e.result}${e.detail === undefined ? "" : ` (${e.detail})`}`),
  );
  const got = outcomes.flatMap((o) => o.fires.map((f) => ({ seq: f.seq, target: f.target?.key ?? "" })));
  const key = (f: ExpectedFire) => `${f.seq}\u0000${f.target}`;
  const order = (a: ExpectedFire, b: ExpectedFire) => a.seq - b.seq || (a.target < b.target ? -1 : 1);
  const want = [...c.fires].sort(order);
  const same = got.length === want.length && got.every((f, i) => key(f) === key(want[i] as ExpectedFire));
  const findings: Finding[] = [];
  if (!same)
    findings.push(
      finding(
        file,
        c.at,
        "error",
        "test_failed",
        `case ${JSON.stringify(c.name)}: expected ${list(want)}, got ${list(got)}`,
      ),
    );
  if (errors.length > 0)
    findings.push(
      finding(file, c.at, "error", "test_failed", `case ${JSON.stringify(c.name)}: ${errors.join("; ")}`),
    );
  return findings;
}
