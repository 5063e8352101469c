/**
 * The read-tier `harness rules` verbs (SPEC-0029 REQ-18), all through `RuleService` on the daemon's
 * socket: `list`, `show <name>`, `explain <fire-id>`, `explain --harness <name>` and `holds`. Each prints
 * a readable table or, with `--json`, one JSON object; exit codes are `EXIT`'s (docs/cli.md).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { formatDuration, HOUR } from "../core/durations.js";
import { rfc3339Seconds } from "../core/instants.js";
import { isLevel } from "../core/rule-file.js";
import { needsEnforce } from "../core/rule-set.js";
import { clientTarget, EXIT, unreachable } from "./client-target.js";
import { type RuleClient, ruleClient } from "./rpc/client.js";
import {
  ErrorDetailSchema,
  ErrorReason,
  type ExplainFireResponse,
  type FireInfo,
  type HoldInfo,
  type HoldRecord,
  type PrimitiveCallInfo,
  type RuleInfo,
} from "./rpc/gen/harness/v1/rules_pb.js";

export interface Io {
  readonly env: NodeJS.ProcessEnv;
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

export interface Common {
  readonly socket?: string | undefined;
  readonly config?: string | undefined;
  readonly json?: boolean | undefined;
}

/** The exit code of each RuleService sentinel (docs/cli.md). */
const EXIT_FOR_REASON: Readonly<Record<ErrorReason, number>> = {
  [ErrorReason.UNSPECIFIED]: EXIT.error,
  [ErrorReason.UNKNOWN_RULE]: EXIT.failed,
  [ErrorReason.UNKNOWN_FIRE]: EXIT.failed,
  [ErrorReason.HOLD_NOT_FOUND]: EXIT.failed,
  [ErrorReason.INVALID_ARGUMENT]: EXIT.usage,
  [ErrorReason.RELOAD_FAILED]: EXIT.error,
  [ErrorReason.RULE_SCHEMA]: EXIT.failed,
  [ErrorReason.COMPILE]: EXIT.failed,
  [ErrorReason.COST_ESTIMATE]: EXIT.failed,
  [ErrorReason.BACKTEST_BUSY]: EXIT.error,
  [ErrorReason.SINCE_TOO_LONG]: EXIT.usage,
  [ErrorReason.UNKNOWN_POLICY_REPO]: EXIT.failed,
  [ErrorReason.INVALID_PROPOSAL_LEVEL]: EXIT.failed,
  [ErrorReason.PROPOSAL_BACKLOG_FULL]: EXIT.error,
  [ErrorReason.SUPPRESSED_PROPOSAL]: EXIT.failed,
  [ErrorReason.PROPOSAL_CAP_REACHED]: EXIT.failed,
  [ErrorReason.UNKNOWN_PROPOSAL]: EXIT.failed,
  [ErrorReason.UNKNOWN_EVIDENCE]: EXIT.failed,
  [ErrorReason.PROPOSAL_RUN_LIMIT]: EXIT.error,
  [ErrorReason.NOT_RULE_MINER]: EXIT.error,
  [ErrorReason.PROPOSAL_STATE]: EXIT.failed,
};

/** Says why a call failed, and returns its exit code: by the error's sentinel, else by what failed. */
export function failed(command: string, socketPath: string, e: unknown, io: Io): number {
  if (unreachable(e)) {
    io.err(`harness ${command}: no daemon answers on ${socketPath}`);
    return EXIT.unreachable;
  }
  if (!(e instanceof ConnectError)) {
    io.err(`harness ${command}: ${(e as Error).message}`);
    return EXIT.error;
  }
  io.err(`harness ${command}: ${e.rawMessage}`);
  const detail = e.findDetails(ErrorDetailSchema)[0];
  if (detail !== undefined) return EXIT_FOR_REASON[detail.reason];
  return e.code === Code.InvalidArgument ? EXIT.usage : EXIT.error;
}

/** Runs one client command against the daemon, mapping its failure to an exit code. */
export async function withClient(
  command: string,
  options: Common,
  io: Io,
  run: (client: RuleClient, socketPath: string) => Promise<number>,
): Promise<number> {
  const target = await clientTarget({ socket: options.socket, config: options.config, env: io.env });
  try {
    return await run(ruleClient({ socketPath: target.socketPath }), target.socketPath);
  } catch (e) {
    return failed(command, target.socketPath, e, io);
  }
}

/** An RFC 3339 time, second precision; null for the protocol's "not set" (0). */
export const iso = (ms: bigint): string | null => (ms === 0n ? null : rfc3339Seconds(Number(ms)));

const isoOr = (ms: bigint, none: string): string => iso(ms) ?? none;

/** Columns padded to their widest cell, two spaces apart. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** REQ-18's mode: `active`, `shadow until <time>` or `disabled: <reason>`. */
function modeOf(r: RuleInfo): string {
  if (r.state === "disabled") return `disabled: ${r.disabledReason}`;
  if (r.state === "shadow")
    return r.shadowUntilMs === 0n
      ? "shadow (starts at the next row)"
      : `shadow until ${iso(r.shadowUntilMs)}`;
  return r.state;
}

function ruleJson(r: RuleInfo) {
  const loaded = r.state !== "disabled" || r.disabledReason === "cost_exceeded";
  return {
    name: r.name,
    source: r.source,
    state: r.state,
    mode: modeOf(r),
    ...(r.state === "disabled"
      ? { disabled_reason: r.disabledReason, disabled_message: r.disabledMessage }
      : {}),
    file: r.file,
    ...(loaded
      ? {
          hash: r.hash,
          on: r.on,
          target: r.target,
          declared_level: r.declaredLevel,
          effective_level: r.effectiveLevel,
          enforced: r.enforced,
          cooldown: formatDuration(Number(r.cooldownMs)),
          shadow_since: iso(r.shadowSinceMs),
          shadow_until: iso(r.shadowUntilMs),
          estimated_cost: Number(r.estimatedCost),
          fires_24h: r.fires24h,
          fires_7d: r.fires7d,
          suppressed: Number(r.suppressed),
          last_fire: r.lastFireId === "" ? null : { fire_id: r.lastFireId, at: iso(r.lastFireAtMs) },
        }
      : {}),
  };
}

const lastFire = (r: RuleInfo): string =>
  r.lastFireId === "" ? "-" : `${isoOr(r.lastFireAtMs, "?")} (${r.lastFireId})`;

/** `harness rules list`: every rule of the set in force, loaded or disabled. */
export function runList(options: Common, io: Io): Promise<number> {
  return withClient("rules list", options, io, async (client) => {
    const { rules } = await client.listRules({});
    if (options.json === true) {
      io.out(JSON.stringify({ rules: rules.map(ruleJson) }));
      return EXIT.ok;
    }
    const rows = rules.map((r) => [
      r.name,
      r.source,
      r.hash === "" ? "-" : r.hash.slice(0, 12),
      modeOf(r),
      r.declaredLevel === "" ? "-" : r.declaredLevel,
      r.effectiveLevel === "" ? "-" : r.effectiveLevel,
      r.hash === "" ? "-" : `${r.fires24h}/${r.fires7d}`,
      lastFire(r),
    ]);
    for (const line of table(
      ["NAME", "SOURCE", "HASH", "MODE", "DECLARED", "EFFECTIVE", "FIRES 24H/7D", "LAST FIRE"],
      rows,
    ))
      io.out(line);
    return EXIT.ok;
  });
}

const enforceStatus = (r: RuleInfo): string =>
  r.enforced
    ? "listed in [memory.rules] enforce"
    : isLevel(r.declaredLevel) && needsEnforce(r.declaredLevel)
      ? `not in [memory.rules] enforce: acts at notify, not ${r.declaredLevel}`
      : "not in [memory.rules] enforce (not needed below hold)";

/** A hold record's hold, which the daemon always sends. */
export function holdOf(h: HoldRecord): HoldInfo {
  if (h.hold === undefined) throw new Error("the daemon sent a hold record without its hold");
  return h.hold;
}

const holdJson = (h: HoldInfo) => ({
  harness: h.harness,
  rule: h.rule,
  hash: h.hash,
  fire_id: h.fireId,
  since: iso(h.sinceMs),
});

/** `harness rules show <name>`: list's row plus the file, `when`, cost, shadow_since, enforce and holds. */
export function runShow(name: string, options: Common, io: Io): Promise<number> {
  return withClient("rules show", options, io, async (client) => {
    const res = await client.getRule({ name });
    const r = res.rule;
    if (r === undefined) throw new Error(`the daemon sent no rule for ${name}`);
    const warnings =
      r.declaredLevel === "hold" && res.primitiveCalls === 0 && r.state !== "disabled"
        ? [
            `${name} is a hold rule whose when calls no count, distinct or exists: its hold never clears on its own, only by harness rules clear`,
          ]
        : [];
    if (options.json === true) {
      io.out(
        JSON.stringify({
          ...ruleJson(r),
          ...(res.when === "" ? {} : { when: res.when, description: res.description, message: res.message }),
          primitive_calls: res.primitiveCalls,
          holds: res.holds.map(holdJson),
          warnings,
        }),
      );
      return EXIT.ok;
    }
    const lines: [string, string][] = [
      ["name", r.name],
      ["source", r.source],
      ["file", r.file],
      ["mode", modeOf(r)],
    ];
    if (r.state === "disabled") lines.push(["disabled", `${r.disabledReason}: ${r.disabledMessage}`]);
    if (r.hash !== "") {
      lines.push(
        ["description", res.description],
        ["on", r.on],
        ["target", r.target],
        ["level", `declared ${r.declaredLevel}, effective ${r.effectiveLevel}`],
        ["enforce", enforceStatus(r)],
        ["hash", r.hash],
        [
          "shadow_since",
          r.source === "starter" ? "- (starter rules skip shadow)" : isoOr(r.shadowSinceMs, "-"),
        ],
        ["cooldown", formatDuration(Number(r.cooldownMs))],
        ["cost", `estimated at most ${r.estimatedCost} units (limit 5000)`],
        ["fires", `${r.fires24h} in 24h, ${r.fires7d} in 7d; ${r.suppressed} suppressed by cooldown`],
        ["last fire", lastFire(r)],
        ["message", res.message],
        ["when", res.when],
      );
      lines.push([
        "holds",
        res.holds.length === 0
          ? "none"
          : res.holds.map((h) => `${h.harness} since ${isoOr(h.sinceMs, "?")} (${h.fireId})`).join("; "),
      ]);
    }
    const width = Math.max(...lines.map(([k]) => k.length));
    for (const [k, v] of lines) io.out(`${k.padEnd(width)}  ${v}`);
    for (const w of warnings) io.out(`warning: ${w}`);
    return EXIT.ok;
  });
}

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

function explanationJson(x: ExplainFireResponse) {
  const f = x.fire;
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
function explanationLines(x: ExplainFireResponse): string[] {
  const f = x.fire;
  if (f === undefined) return [];
  const out = [
    `fire ${f.fireId}: rule ${f.rule}`,
    `  hash     ${f.hash}`,
    x.row === undefined
      ? `  row      seq ${f.seq} ${f.kind} ${f.type}: pruned from the journal by retention`
      : `  row      seq ${x.row.seq} ${x.row.kind} ${x.row.type}, admitted ${iso(x.row.atMs)} from ${x.row.source}`,
  ];
  if (x.row?.event !== undefined) out.push(`  event    ${JSON.stringify(x.row.event)}`);
  out.push(`  now      ${iso(x.nowMs)} (the row's admission time)`);
  if (x.when !== "") out.push(`  when     ${x.when}`);
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

/** `harness rules explain <fire-id>`. */
export function runExplainFire(fireId: string, options: Common, io: Io): Promise<number> {
  return withClient("rules explain", options, io, async (client) => {
    const x = await client.explainFire({ fireId });
    if (options.json === true) io.out(JSON.stringify(explanationJson(x)));
    else for (const line of explanationLines(x)) io.out(line);
    return EXIT.ok;
  });
}

/** How a hold in force can end (REQ-11): its condition on ticks, `clear`, a reload. */
function releaseWays(h: HoldRecord, primitiveCalls: number | undefined): string[] {
  const hold = holdOf(h);
  const cooldown = formatDuration(Number(h.cooldownMs));
  const condition =
    primitiveCalls === 0
      ? `never on its own: ${hold.rule}'s when calls no primitive, so it stays true for the firing event`
      : `on its own once ${hold.rule}'s when has been false on every tick for ${cooldown}${
          h.falseSinceMs === 0n ? " (it is true now)" : ` (false since ${iso(h.falseSinceMs)})`
        }`;
  return [
    condition,
    `by hand: harness rules clear ${hold.harness} --rule ${hold.rule}`,
    `by a reload that leaves ${hold.rule} absent, disabled, changed in hash or out of [memory.rules] enforce`,
  ];
}

/** `harness rules explain --harness <name>`: its holds in force, each fire explained, then its fires. */
export function runExplainHarness(
  harness: string,
  options: Common & { readonly limit?: number | undefined },
  io: Io,
): Promise<number> {
  return withClient("rules explain", options, io, async (client) => {
    const { holds } = await client.listHolds({ harness });
    const explained = [];
    for (const h of holds) {
      const hold = holdOf(h);
      const explanation = await client.explainFire({ fireId: hold.fireId }).catch((e: unknown) => {
        // A hold outlives nothing it needs: its fire is in the log. Say so rather than hide the hold.
        if (e instanceof ConnectError && e.code === Code.NotFound) return undefined;
        throw e;
      });
      const rule = await client.getRule({ name: hold.rule }).catch((e: unknown) => {
        // The holding rule may have left the set since; its hold is then released at the next reload.
        if (e instanceof ConnectError && e.code === Code.NotFound) return undefined;
        throw e;
      });
      explained.push({ h, hold, explanation, release: releaseWays(h, rule?.primitiveCalls) });
    }
    const fires = await client.listFires({ harness, limit: options.limit ?? 0 });
    if (options.json === true) {
      io.out(
        JSON.stringify({
          harness,
          holds: explained.map(({ h, hold, explanation, release }) => ({
            ...holdJson(hold),
            false_since: iso(h.falseSinceMs),
            fire: explanation === undefined ? null : explanationJson(explanation),
            release,
          })),
          fires: fires.fires.map(fireJson),
          truncated: fires.truncated,
        }),
      );
      return EXIT.ok;
    }
    io.out(
      holds.length === 0
        ? `${harness}: no hold in force`
        : `${harness}: ${holds.length} hold${holds.length === 1 ? "" : "s"} in force`,
    );
    for (const { hold, explanation, release } of explained) {
      io.out("");
      io.out(`hold by rule ${hold.rule} since ${isoOr(hold.sinceMs, "?")}`);
      if (explanation === undefined) io.out(`  its fire ${hold.fireId} is not in the fire log`);
      else for (const line of explanationLines(explanation)) io.out(`  ${line}`);
      io.out("  released:");
      for (const way of release) io.out(`    ${way}`);
    }
    io.out("");
    io.out(
      fires.fires.length === 0
        ? `${harness}: no fires`
        : `${harness}: fires, newest first${fires.truncated ? ` (the newest ${fires.fires.length})` : ""}`,
    );
    if (fires.fires.length === 0) return EXIT.ok;
    for (const line of table(
      ["FIRE", "AT", "RULE", "MODE", "LEVEL", "ACTION", "OUTCOME"],
      fires.fires.map((f) => [
        f.fireId,
        isoOr(f.atMs, "?"),
        f.rule,
        f.mode,
        f.effectiveLevel,
        f.action,
        f.actions.map((a) => `${a.action} ${a.state}`).join(", ") || "-",
      ]),
    ))
      io.out(line);
    return EXIT.ok;
  });
}

/** A hold record as `rules holds --json` and `rules watch --json` print it. */
export const holdRecordJson = (h: HoldRecord) => ({
  ...holdJson(holdOf(h)),
  cooldown: formatDuration(Number(h.cooldownMs)),
  false_since: iso(h.falseSinceMs),
  released_at: iso(h.releasedAtMs),
  release_cause: h.releaseCause === "" ? null : h.releaseCause,
});

const holdState = (h: HoldRecord): string =>
  h.releasedAtMs !== 0n
    ? `released: ${h.releaseCause} at ${iso(h.releasedAtMs)}`
    : h.falseSinceMs === 0n
      ? "held"
      : `held (condition false since ${iso(h.falseSinceMs)})`;

/** `harness rules holds [--harness NAME] [--released]`. */
export function runHolds(
  options: Common & {
    readonly harness?: string | undefined;
    readonly released?: boolean | undefined;
    readonly limit?: number | undefined;
  },
  io: Io,
): Promise<number> {
  return withClient("rules holds", options, io, async (client) => {
    const res = await client.listHolds({
      harness: options.harness ?? "",
      includeReleased: options.released === true,
      limit: options.limit ?? 0,
    });
    if (options.json === true) {
      io.out(
        JSON.stringify({
          holds: res.holds.map(holdRecordJson),
          truncated: res.truncated,
        }),
      );
      return EXIT.ok;
    }
    if (res.holds.length === 0) {
      io.out(options.harness === undefined ? "no holds in force" : `${options.harness}: no holds in force`);
      return EXIT.ok;
    }
    for (const line of table(
      ["HARNESS", "RULE", "SINCE", "FIRE", "STATE"],
      res.holds.map((h) => {
        const hold = holdOf(h);
        return [hold.harness, hold.rule, isoOr(hold.sinceMs, "?"), hold.fireId, holdState(h)];
      }),
    ))
      io.out(line);
    if (res.truncated) io.out("(more released holds than shown; use --limit)");
    return EXIT.ok;
  });
}
