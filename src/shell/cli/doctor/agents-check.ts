/**
 * `harness doctor`'s agents row (docs/agents.md): the hook adapters installed per harness (from
 * the record `harness agents install` keeps, checked against the settings files it wrote and the token
 * files), each harness's last journal row (AgentStatusService.LastRows; skipped when no daemon answers),
 * and the command hook's spool: its depth, the calls it dropped when full, the calls the daemon refused.
 * A remote install (decision 0017) names its daemon's URL, and whether its hook endpoint answers the
 * challenge through the install's TLS files. It warns of what stops hooks reaching the journal; it
 * never fails doctor on its own.
 */

import { tlsOptions } from "../../agents/forwarder/https-post.js";
import { MAX_TRIES } from "../../agents/forwarder/spool.js";
import { probeRemote, type RemoteProbe } from "../../agents/ingest/hook-challenge.js";
import type { RemoteDaemon } from "../../agents/ingest/hook-limits.js";
import { type AgentsStatus, agentsStatus } from "../../agents/install/agents-status.js";
import type { InstallEntry } from "../../agents/install/install-record.js";
import type { LastRow } from "../../rpc/gen/harness/v1/agent_status_pb.js";
import { iso } from "../io.js";
import { printable } from "../render/printable.js";

type Status = "pass" | "warn" | "fail";

export interface AgentsCheck {
  readonly name: "agents";
  readonly status: Status;
  readonly detail: string;
  readonly findings: readonly { readonly status: Status; readonly message: string }[];
}

/** Each harness's last row from the daemon, or why it could not say; undefined when no daemon answers. */
export type LastRows = (harnesses: readonly string[]) => Promise<readonly LastRow[]>;

/** A harness's fail mode as installed: its own `--fail`, or the global default it follows. */
const failWords = (install: InstallEntry): string =>
  install.fail === undefined ? "fails as [agents] on_unreachable says" : `fails ${install.fail}`;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

const CLIENT_WORDS = { native: "the native client", sh: "sh and curl", node: "Node alone" } as const;

/** Whether a remote daemon answers through its TLS files (a file that cannot be read says so). */
async function probe(daemon: RemoteDaemon): Promise<RemoteProbe> {
  try {
    return await probeRemote(daemon, tlsOptions(daemon));
  } catch (e) {
    return { kind: "other", detail: (e as Error).message };
  }
}

export async function agentsCheck(
  env: NodeJS.ProcessEnv,
  lastRows: LastRows | undefined,
  probeDaemon: (daemon: RemoteDaemon) => Promise<RemoteProbe> = probe,
): Promise<AgentsCheck> {
  const status = agentsStatus(env);
  const probes = new Map<string, Promise<RemoteProbe>>();
  const findings: { status: Status; message: string }[] = [];
  if (status.recordProblem !== undefined) findings.push({ status: "warn", message: status.recordProblem });
  for (const a of status.adapters) {
    const { agent, harness, file, mode } = a.install;
    const what = `${agent} for ${harness}`;
    if (a.problem !== undefined)
      findings.push({
        status: "warn",
        message: `${what}: ${file}: ${a.problem}; run harness agents install again`,
      });
    else if (a.present < a.expected)
      findings.push({
        status: "warn",
        message: `${what}: ${file} holds ${a.present} of the ${a.expected} hook entries install wrote; run harness agents install again`,
      });
    else
      findings.push({
        status: "pass",
        message: `${what}: ${plural(a.expected, "hook")} in ${file} (${mode} mode${a.client === undefined ? "" : ` via ${CLIENT_WORDS[a.client]}`}, ${failWords(a.install)}${a.install.daemon === undefined ? "" : `, posting to ${a.install.daemon}`})`,
      });
    const remote = a.remote ?? (a.install.daemon === undefined ? undefined : { url: a.install.daemon });
    if (remote !== undefined) {
      const key = JSON.stringify(remote);
      if (!probes.has(key)) probes.set(key, probeDaemon(remote));
      const p = await (probes.get(key) as Promise<RemoteProbe>);
      findings.push(
        p.kind === "answers"
          ? {
              status: "pass",
              message: `${what}: ${remote.url} answers the hook endpoint's challenge over TLS`,
            }
          : {
              status: "warn",
              message: `${what}: ${p.detail}; ${mode === "command" ? "its calls wait in the spool until it answers" : "its http hooks fail open (nothing recorded) until it answers"}`,
            },
      );
    }
    for (const f of a.missingPrograms)
      findings.push({
        status: "warn",
        message: `${what}: its hook runs ${f}, which is gone, so the agent's hooks fail to start; run harness agents install again`,
      });
    if (a.client === "node" && a.remote === undefined)
      findings.push({
        status: "warn",
        message: `${what}: its hooks start Node on every call (installed before the fast paths); run harness agents install again`,
      });
    for (const f of a.missingTokenFiles)
      findings.push({
        status: "warn",
        message: `${what}: token file ${f} is missing, so its hooks cannot append`,
      });
  }
  if (status.adapters.length > 0 && lastRows !== undefined)
    findings.push(...(await lastRowFindings(status.adapters, lastRows)));
  findings.push(...spoolFindings(status, lastRows !== undefined));
  const worst: Status = findings.some((f) => f.status === "warn") ? "warn" : "pass";
  return {
    name: "agents",
    status: worst,
    detail:
      status.adapters.length === 0
        ? "no hook adapters installed (harness agents install)"
        : `${plural(status.adapters.length, "adapter")} installed: ${status.adapters
            .map(
              (a) =>
                `${a.install.agent} for ${a.install.harness} (${a.install.mode}, ${failWords(a.install)}${a.install.daemon === undefined ? "" : `, ${a.install.daemon}`})`,
            )
            .join(", ")}`,
    findings: findings.map((f) => ({ status: f.status, message: printable(f.message) })),
  };
}

/**
 * Each harness's last row, and a warning for each install whose harness has sent no row since it was
 * installed: the agent has not run since, or runs without our hooks (the adapter says why it may).
 */
async function lastRowFindings(
  adapters: AgentsStatus["adapters"],
  lastRows: LastRows,
): Promise<{ status: Status; message: string }[]> {
  const harnesses = [...new Set(adapters.map((a) => a.install.harness))];
  let rows: readonly LastRow[];
  try {
    rows = await lastRows(harnesses);
  } catch (e) {
    return [
      { status: "warn", message: `the daemon did not say each harness's last row: ${(e as Error).message}` },
    ];
  }
  const lastOf = (h: string) => rows.find((row) => row.harness === h);
  const out: { status: Status; message: string }[] = harnesses.map((h) => {
    const r = lastOf(h);
    return {
      status: "pass",
      message:
        r === undefined
          ? `${h}: no run_event row yet (the hooks write one when the agent starts a session)`
          : `${h}: last row seq ${r.seq} run_event/${r.type} from ${r.source}${r.adapter === "" ? "" : ` (${r.adapter})`}, run ${r.run}, at ${iso(r.atMs)}`,
    };
  });
  for (const a of adapters) {
    const { agent, harness, installedAt } = a.install;
    const since = Date.parse(installedAt);
    const r = lastOf(harness);
    if (Number.isNaN(since) || (r !== undefined && Number(r.atMs) >= since)) continue;
    out.push({
      status: "warn",
      message: `${agent} for ${harness}: no row since install at ${installedAt}${a.silentWhy === undefined ? "" : `; ${a.silentWhy}`}`,
    });
  }
  return out;
}

/**
 * The spool's row. Calls waiting while the daemon answers are not waiting for it: the next hook call
 * delivers them, or their delivery is failing (each failure counted; at the limit they are set aside).
 */
function spoolFindings(
  { spool, adapters }: AgentsStatus,
  daemonUp: boolean,
): { status: Status; message: string }[] {
  const out: { status: Status; message: string }[] = [];
  if (spool.depth > 0)
    out.push({
      status: "warn",
      message: daemonUp
        ? `${plural(spool.depth, "hook call")} spooled in ${spool.dir} though the daemon answers: the next hook call delivers them, in order; if they stay, their delivery is failing (harness agents spool list)`
        : `${plural(spool.depth, "hook call")} spooled in ${spool.dir}, waiting for the daemon (the next hook call that reaches it delivers them, in order)`,
    });
  if (spool.setAside > 0)
    out.push({
      status: "warn",
      message: `${plural(spool.setAside, "spooled hook call")} set aside in ${spool.dir}/set-aside: delivering ${spool.setAside === 1 ? "it" : "each"} failed ${MAX_TRIES} times (timed out or a daemon error); harness agents spool list, then retry or drop`,
    });
  if (spool.overflow > 0)
    out.push({
      status: "warn",
      message: `${plural(spool.overflow, "hook call")} dropped: the spool was full`,
    });
  if (spool.failed > 0)
    out.push({
      status: "warn",
      message: `${plural(spool.failed, "spooled hook call")} refused by the daemon, kept in ${spool.dir}/failed`,
    });
  if (out.length === 0 && adapters.length > 0) out.push({ status: "pass", message: "spool: empty" });
  return out;
}
