/**
 * How a fire is printed: its JSON form (`explain`, `explain --harness`, `watch`), and REQ-18's
 * explanation, with each primitive call written as the rule wrote it and the values the row gave it.
 */
import { formatDuration, HOUR } from "../../../core/durations.js";
import type {
  ExplainFireResponse,
  FireInfo,
  GuardDecision,
  PrimitiveCallInfo,
} from "../../rpc/gen/harness/v1/rules_pb.js";
import { iso, isoOr } from "../io.js";

function selectorText(p: PrimitiveCallInfo): string {
  const terms = p.selector.map((t) => `${JSON.stringify(t.field)}: ${JSON.stringify(t.value.value)}`);
  return `{${terms.join(", ")}}`;
}

/** A window as `duration("…")` takes it: Go's units, hours at most (CEL has no `d`). */
function celDuration(ms: number): string {
  const hours = Math.floor(ms / HOUR);
  const rest = ms - hours * HOUR;
  if (hours === 0) return formatDuration(rest);
  return `${hours}h${rest === 0 ? "" : formatDuration(rest)}`;
}

const resultOf = (p: PrimitiveCallInfo): number | boolean | null => p.result.value ?? null;

/** One primitive call as written in the rule, with the values this row gave it: `count({…}, duration("24h")) = 2`. */
function primitiveText(p: PrimitiveCallInfo): string {
  const args = [
    ...(p.field === "" ? [] : [JSON.stringify(p.field)]),
    selectorText(p),
    `duration("${celDuration(Number(p.withinMs))}")`,
  ];
  return `${p.fn}(${args.join(", ")}) = ${String(resultOf(p))}`;
}

const fireTarget = (f: FireInfo) => (f.targetKind === "" ? null : { kind: f.targetKind, key: f.targetKey });

const actionsJson = (f: FireInfo) =>
  f.actions.map((a) => ({
    action: a.action,
    state: a.state,
    detail: a.detail === "" ? null : a.detail,
    updated_at: iso(a.updatedAtMs),
  }));

export function fireJson(f: FireInfo) {
  return {
    fire_id: f.fireId,
    rule: f.rule,
    hash: f.hash,
    seq: Number(f.seq),
    at: iso(f.atMs),
    kind: f.kind,
    type: f.type,
    target: fireTarget(f),
    declared_level: f.declaredLevel,
    effective_level: f.effectiveLevel,
    mode: f.mode,
    action: f.action,
    message: f.message,
    actions: actionsJson(f),
  };
}

export function explanationJson(x: ExplainFireResponse) {
  const f = x.fire;
  if (f === undefined && x.guard !== undefined) return guardJson(x.guard, x);
  if (f === undefined) throw new Error("the daemon sent an explanation without its fire");
  return {
    ...fireJson(f),
    when: x.when === "" ? null : x.when,
    row:
      x.row === undefined
        ? null
        : {
            seq: Number(x.row.seq),
            kind: x.row.kind,
            type: x.row.type,
            at: iso(x.row.atMs),
            source: x.row.source,
            event: x.row.event ?? {},
          },
    row_pruned: x.rowPruned,
    now: iso(x.nowMs),
    primitives: x.primitives.map((p) => ({
      fn: p.fn,
      ...(p.field === "" ? {} : { field: p.field }),
      selector: Object.fromEntries(p.selector.map((t) => [t.field, t.value.value ?? null])),
      within: celDuration(Number(p.withinMs)),
      result: resultOf(p),
    })),
    level_derivation: x.levelDerivation,
  };
}

const actionLine = (a: FireInfo["actions"][number]): string =>
  `${a.action}: ${a.state}${a.detail === "" ? "" : ` (${a.detail})`}${a.updatedAtMs === 0n ? "" : ` at ${iso(a.updatedAtMs)}`}`;

/** The explanation of one fire, as lines: what REQ-18's explain shows. */
export function explanationLines(x: ExplainFireResponse): string[] {
  const f = x.fire;
  if (f === undefined) return x.guard === undefined ? [] : guardLines(x.guard, x);
  const out = [
    `fire ${f.fireId}: rule ${f.rule}`,
    `  hash     ${f.hash}`,
    x.row === undefined
      ? `  row      seq ${f.seq} ${f.kind} ${f.type}: pruned from the journal by retention`
      : `  row      seq ${x.row.seq} ${x.row.kind} ${x.row.type}, admitted ${iso(x.row.atMs)} from ${x.row.source}`,
  ];
  if (x.row?.event !== undefined) out.push(`  event    ${JSON.stringify(x.row.event)}`);
  out.push(`  now      ${iso(x.nowMs)} (the row's admission time)`);
  // A `when` may span lines: one line each, so the text views can escape every line break in what producers wrote.
  if (x.when !== "")
    out.push(...x.when.split("\n").map((l, i) => `${i === 0 ? "  when     " : " ".repeat(11)}${l}`));
  out.push(`  calls    ${x.primitives.length === 0 ? "none" : ""}`.trimEnd());
  for (const p of x.primitives) out.push(`    ${primitiveText(p)}`);
  out.push(
    `  mode     ${f.mode}`,
    `  level    ${x.levelDerivation}`,
    `  target   ${f.targetKind === "" ? "none: the event lacks the field its target needs" : `${f.targetKind} ${f.targetKey}`}`,
    `  action   ${f.action}`,
  );
  for (const a of f.actions) out.push(`    ${actionLine(a)}`);
  if (f.actions.length === 0 && f.mode === "active" && f.action !== "no_target")
    out.push("    nothing to deliver after the commit (below notify)");
  out.push(`  message  ${f.message}`);
  return out;
}

/** A guard's decision (the loop guard's stop, the stale run closer's close), as `rules explain` prints it. */
function guardLines(g: GuardDecision, x: ExplainFireResponse): string[] {
  const row = x.row;
  const out = [
    g.kind === "loop_stopped"
      ? `loop stop of run ${g.run} (harness ${g.harness}): the loop guard, not a rule`
      : `stale close of run ${g.run} (harness ${g.harness}): the stale run closer, not a rule`,
  ];
  if (row !== undefined)
    out.push(
      `  row      seq ${row.seq} ${row.kind} ${row.type}, admitted ${iso(row.atMs)} from ${row.source}`,
    );
  if (g.kind === "loop_stopped") {
    out.push(
      `  call     ${g.tool} with input digest ${g.digest}`,
      `  streak   ${g.streakRows} identical calls (tool and digest) in an unbroken streak, the guard's threshold ${g.threshold}`,
    );
    if (g.streakRows > 0)
      out.push(
        `  window   seq ${g.firstSeq} at ${iso(g.firstAtMs)} to seq ${g.lastSeq} at ${iso(g.lastAtMs)} (${formatDuration(Number(g.lastAtMs - g.firstAtMs))})`,
      );
    // A hook-fed run's stop waits to be told at its next hook call; a supervisor's stopped the harness.
    if (g.resumeCommand !== "")
      out.push(
        `  told     ${isoOr(g.deliveredAtMs, "not yet: at the run's next hook call")}`,
        `  released ${isoOr(g.releasedAtMs, `no: ${g.resumeCommand}`)}`,
      );
  } else if (g.lastSeq !== 0n) out.push(`  last row seq ${g.lastSeq} at ${iso(g.lastAtMs)}`);
  out.push(`  ${g.sentence}`);
  return out;
}

function guardJson(g: GuardDecision, x: ExplainFireResponse) {
  const row = x.row;
  return {
    guard: g.kind,
    harness: g.harness,
    run: g.run,
    row:
      row === undefined
        ? null
        : {
            seq: Number(row.seq),
            kind: row.kind,
            type: row.type,
            at: iso(row.atMs),
            source: row.source,
            event: row.event ?? {},
          },
    ...(g.kind === "loop_stopped"
      ? {
          tool: g.tool,
          digest: g.digest,
          threshold: g.threshold,
          streak: {
            calls: g.streakRows,
            first_seq: Number(g.firstSeq),
            first_at: iso(g.firstAtMs),
            last_seq: Number(g.lastSeq),
            last_at: iso(g.lastAtMs),
          },
          delivered_at: iso(g.deliveredAtMs),
          released_at: iso(g.releasedAtMs),
          resume: g.resumeCommand === "" ? null : g.resumeCommand,
        }
      : { last_seq: Number(g.lastSeq), last_at: iso(g.lastAtMs) }),
    sentence: g.sentence,
  };
}
