/**
 * `harness doctor` (SPEC-0029 REQ-19's rules row), through `RuleService.GetStatus` and `ListHolds`: is the
 * daemon reachable, and is the rule set healthy. Lists the enforced rules. Fails when an enforce name
 * matches no rule or names a disabled one, when a pin names a content hash its rule no longer has, or while the store cannot write (`storeWriteCheck`); warns when a rule is disabled, a harness is held, a policy clone is dirty, off its branch
 * or missing, journal rows were dropped since start, a rule stop went undelivered or ended unknown, or
 * the evaluator lags behind the journal. The agents row (`../doctor/agents-check.ts`) shows the hook
 * adapters installed, each harness's last row and the hook spool. The reload row
 * (`../doctor/reload-check.ts`) fails after a failed reload until a good one; the listen row
 * (`../doctor/hook-endpoint-check.ts`) fails when another process answers on `[agents] listen`; under
 * `[store] url` the store row is the database as reached from here (`../doctor/store-pg-check.ts`), shown
 * even when no daemon answers. Exit 1 on a fail, 3 when no daemon answers, 0 otherwise. Against a remote
 * daemon (`--daemon`, decision 0018) the rows the daemon answers are checked as on its machine; the
 * listen and tls rows, which look at the daemon's own config files and ports, are `skip`: local only,
 * never a fail; the store row is then the daemon's own, this machine's `[store]` unread.
 */
import { formatDuration } from "../../../core/durations.js";
import { agentStatusClient, handshakeFailed, ruleClient, unreachable } from "../../rpc/client.js";
import type { EnforcedRule, GetStatusResponse, HoldRecord } from "../../rpc/gen/harness/v1/rules_pb.js";
import { packageVersion } from "../../support/version.js";
import { failed } from "../client.js";
import { agentsCheck } from "../doctor/agents-check.js";
import { hookEndpointCheck } from "../doctor/hook-endpoint-check.js";
import { reloadCheck } from "../doctor/reload-check.js";
import { storePgCheck } from "../doctor/store-pg-check.js";
import { tlsCheck } from "../doctor/tls-check.js";
import { type Common, EXIT, type Io, iso } from "../io.js";
import { stalePinSentence } from "../render/rules.js";
import { type ClientTarget, clientTarget, noAnswer, readToken } from "../target.js";

/** `skip`: a row that can only be checked on the daemon's machine, asked from another. */
export type Status = "pass" | "warn" | "fail" | "skip";

/** One thing a check found, with how much it matters. */
export interface CheckFinding {
  readonly status: Status;
  readonly message: string;
}

export interface Check {
  readonly name: string;
  readonly status: Status;
  readonly detail: string;
  readonly findings: readonly CheckFinding[];
}

/** A lag beyond this, with rows waiting, means the evaluator is stalled rather than catching up. */
const LAG_WARN_SECONDS = 120;

const worst = (statuses: readonly Status[]): Status =>
  statuses.includes("fail") ? "fail" : statuses.includes("warn") ? "warn" : "pass";

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * An enforced rule: a pass once it can act at its level; a warning while in shadow, when it acts at no
 * level (REQ-9). A disabled one is a fail of its own.
 */
function enforcedFinding(e: EnforcedRule, nowMs: bigint): CheckFinding {
  const how = e.pinned ? `pinned to ${e.hash.slice(0, 12)}` : "by name, whatever its content";
  if (e.state === "shadow")
    return {
      status: "warn",
      message: `enforced rule ${e.name} (${e.declaredLevel}, ${how}) is in shadow${
        e.shadowUntilMs > nowMs ? ` until ${iso(e.shadowUntilMs)}` : " (it starts at the next row)"
      }: it acts at no level until then`,
    };
  return { status: "pass", message: `enforced: ${e.name} acts at ${e.declaredLevel} (${e.state}, ${how})` };
}

/** REQ-19's rules row, from the daemon's status and its holds in force. */
function rulesCheck(s: GetStatusResponse, holds: readonly HoldRecord[]): Check {
  const findings: CheckFinding[] = [];
  const disabledByName = new Map(s.disabled.map((d) => [d.name, d]));
  for (const name of s.enforcedDisabled) {
    const d = disabledByName.get(name);
    findings.push({
      status: "fail",
      message: `enforced rule ${name} is disabled${d === undefined ? "" : `: ${d.reason}: ${d.message}`}`,
    });
  }
  for (const name of s.unknownEnforced)
    if (!s.enforcedDisabled.includes(name))
      findings.push({
        status: "fail",
        message: `[memory.rules] enforce names ${name}, which matches no rule`,
      });
  for (const p of s.stalePins) findings.push({ status: "fail", message: stalePinSentence(p) });
  for (const e of s.enforced)
    if (!s.enforcedDisabled.includes(e.name)) findings.push(enforcedFinding(e, s.nowMs));
  for (const d of s.disabled)
    if (!s.enforcedDisabled.includes(d.name))
      findings.push({ status: "warn", message: `${d.name} is disabled: ${d.reason}: ${d.message}` });
  for (const c of s.policyClones)
    if (c.state !== "clean")
      findings.push({
        status: "warn",
        message: `policy clone ${c.name} is ${cloneState(c.state)}: ${c.detail}`,
      });
  const held = holds.flatMap((h) => (h.hold === undefined ? [] : [`${h.hold.harness} (${h.hold.rule})`]));
  if (held.length > 0)
    findings.push({
      status: "warn",
      message: `${plural(held.length, "hold")} in force: ${held.join(", ")}; see harness rules explain --harness <name>`,
    });
  const dropped = s.droppedSinceStart.filter((d) => d.rows > 0n);
  if (dropped.length > 0) {
    const total = dropped.reduce((n, d) => n + d.rows, 0n);
    findings.push({
      status: "warn",
      message: `${total} journal row${total === 1n ? "" : "s"} dropped since start (the queue was full): ${dropped
        .map((d) => `${d.source} ${d.rows}`)
        .join(", ")}`,
    });
  }
  if (s.undeliveredStops7d > 0)
    findings.push({
      status: "warn",
      message: `${plural(s.undeliveredStops7d, "rule stop")} recorded undelivered in the last 7 days: ${
        s.supervisorStopConfigured
          ? "lost to a daemon stop or crash"
          : "no [supervisor] stop command is configured, so no rule can stop a run"
      }`,
    });
  if (s.unknownStops7d > 0)
    findings.push({
      status: "warn",
      message: `${plural(s.unknownStops7d, "rule stop")} recorded unknown in the last 7 days: the daemon stopped while ${
        s.unknownStops7d === 1 ? "it ran; see whether its run" : "they ran; see whether their runs"
      } stopped`,
    });
  if (s.needsRestart.length > 0)
    findings.push({
      status: "warn",
      message: `config keys changed since the daemon started and need a restart: ${s.needsRestart.join(", ")}`,
    });
  const behind = s.lastSeq - s.evaluatorCursor;
  const lag = `lag ${formatDuration(Math.round(s.lagSeconds) * 1000)}`;
  findings.push(
    behind > 0n && s.lagSeconds > LAG_WARN_SECONDS
      ? {
          status: "warn",
          message: `the evaluator is ${behind} rows behind the journal (cursor ${s.evaluatorCursor}, last seq ${s.lastSeq}, ${lag})`,
        }
      : {
          status: "pass",
          message: `journal: ${s.journalRows} rows, last seq ${s.lastSeq}; evaluator at ${s.evaluatorCursor}${
            s.evaluatorCursor === 0n ? "" : `, ${lag}`
          }`,
        },
  );
  const loaded = s.rulesActive + s.rulesShadow;
  return {
    name: "rules",
    status: worst(findings.map((f) => f.status)),
    detail: `${loaded} loaded (${s.rulesActive} active, ${s.rulesShadow} shadow), ${s.disabled.length} disabled; policy clones: ${
      s.policyClones.length === 0
        ? "none configured"
        : s.policyClones.map((c) => `${c.name} ${c.state}`).join(", ")
    }`,
    findings,
  };
}

/**
 * Whether the daemon's store can write, as its last write found: a failed write (a full disk, a
 * read-only file) fails, naming the store and the error, until a later write succeeds.
 */
export function storeWriteCheck(s: GetStatusResponse): Check {
  if (s.storeWriteError === "")
    return { name: "store", status: "pass", detail: `writes to ${s.storePath}`, findings: [] };
  return {
    name: "store",
    status: "fail",
    detail: `cannot write ${s.storePath}`,
    findings: [
      {
        status: "fail",
        message: `${plural(s.storeWriteFailures, "write")} failed since ${iso(s.storeWriteFailingSinceMs)}: ${s.storeWriteError}; rows are not admitted (hook calls are answered 503 and wait in their spool) until the store can write again`,
      },
    ],
  };
}

/**
 * Who leads among the daemons on the store (decision 0022), when it can be other than this daemon:
 * passes while one leads under its lease; fails while none does (the lease lapsed) or when this daemon
 * never will (its schema version is not the database's).
 */
export function leaderCheck(s: GetStatusResponse): Check | undefined {
  // SQLite's daemon leads its file for its life: nothing to say.
  if (s.leading && s.leaderExpiresAtMs === 0n) return undefined;
  const epoch = `epoch ${s.leaderEpoch}, since ${iso(s.leaderSinceMs)}`;
  if (s.leading)
    return { name: "leader", status: "pass", detail: `this daemon leads (${epoch})`, findings: [] };
  if (s.leader === "")
    return {
      name: "leader",
      status: "warn",
      detail: `this daemon follows; who leads is unknown: ${s.notLeadingReason || "the store did not answer"}`,
      findings: [],
    };
  const findings: CheckFinding[] = [];
  if (s.notLeadingReason.includes("schema version"))
    findings.push({
      status: "fail",
      message: `${s.notLeadingReason}; upgrade this daemon to the harness that migrated the database`,
    });
  if (s.leaderExpiresAtMs < s.nowMs)
    findings.push({
      status: "fail",
      message: `no daemon leads: the lease of ${s.leader} lapsed at ${iso(s.leaderExpiresAtMs)}, so nothing is evaluated or acted on`,
    });
  return {
    name: "leader",
    status: worst(findings.map((f) => f.status)),
    detail: `${s.leader} leads (${epoch}); this daemon follows`,
    findings,
  };
}

/**
 * Under `[store] url`, one store row: the database as this machine reaches it (`storePgCheck`), and the
 * daemon's last write, when it answers, as findings.
 */
function storeRow(pg: Check | undefined, write: Check): Check {
  if (pg === undefined) return write;
  return {
    ...pg,
    status: worst([pg.status, write.status]),
    findings: [
      ...pg.findings,
      { status: write.status, message: `the daemon ${write.detail}` },
      ...write.findings,
    ],
  };
}

const cloneState = (state: string): string => (state === "off_branch" ? "off its branch" : state);

/** A row only the daemon's machine can check, asked from another: said so, never a fail. */
const localOnly = (name: string, target: ClientTarget): Check => ({
  name,
  status: "skip",
  detail: `local only: the daemon is ${target.where}; run harness doctor on its machine for this row`,
  findings: [],
});

export async function runDoctor(options: Common, io: Io): Promise<number> {
  const target = await clientTarget({ ...options, env: io.env });
  const read = await readToken(target, "doctor");
  if ("error" in read) {
    io.err(read.error);
    return EXIT.error;
  }
  const client = ruleClient(target.rpc, read.token);
  // The database is this machine's config: from another machine the daemon's own row says.
  const store = target.remote ? undefined : target.config?.store;
  const pg = store === undefined ? undefined : await storePgCheck(store);
  let checks: Check[];
  try {
    const status = await client.getStatus({});
    const { holds } = await client.listHolds({});
    checks = [
      {
        name: "daemon",
        status: "pass",
        detail: `answers on ${target.where} (harness ${status.version}, up since ${iso(status.startedAtMs)}${
          target.remote ? `; this client harness ${packageVersion()}` : ""
        })`,
        findings: [],
      },
      rulesCheck(status, holds),
      storeRow(pg, storeWriteCheck(status)),
      ...[leaderCheck(status)].filter((c) => c !== undefined),
      reloadCheck(status),
      target.remote ? localOnly("listen", target) : await hookEndpointCheck(target.config, target.socketPath),
      target.remote ? localOnly("tls", target) : await tlsCheck(target.config, Date.now()),
      await agentsCheck(io.env, async (harnesses) => {
        const res = await agentStatusClient(target.rpc, read.token).lastRows({
          harnesses: [...harnesses],
        });
        return res.rows;
      }),
    ];
  } catch (e) {
    if (!unreachable(e) && !(target.remote && handshakeFailed(e)))
      return failed("doctor", target.where, e, io);
    checks = [
      { name: "daemon", status: "fail", detail: noAnswer(target.where), findings: [] },
      // What is on this machine (the database, installs, the spool) still says something while the
      // daemon is down.
      ...(pg === undefined ? [] : [pg]),
      await agentsCheck(io.env, undefined),
    ];
  }
  const status = worst(checks.map((c) => c.status));
  if (options.json === true) io.out(JSON.stringify({ status, checks }));
  else {
    const width = Math.max(...checks.map((c) => c.name.length));
    for (const c of checks) {
      io.out(`${c.status.toUpperCase().padEnd(4)}  ${c.name.padEnd(width)}  ${c.detail}`);
      for (const f of c.findings) io.out(`${" ".repeat(width + 8)}${f.status}: ${f.message}`);
    }
  }
  if (checks[0]?.status === "fail") return EXIT.unreachable;
  return status === "fail" ? EXIT.failed : EXIT.ok;
}
