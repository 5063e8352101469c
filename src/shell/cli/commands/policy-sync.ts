/**
 * `harness policy sync [name]` (SPEC-0029 REQ-1, REQ-18): clones or fast-forwards each declared policy
 * repo (or the one named), then tells the daemon through `RuleService.PolicySynced` (control tier), once
 * per repo synced. With no daemon running the sync still succeeds: the daemon loads the clone when it
 * starts. Exit 0 when every repo synced and the daemon (if any) reloaded; 1 when a repo did not sync or
 * is not declared; 2 when the global config does not load or the control token cannot be read; 4 when
 * the daemon refused the reload.
 */
import { ConnectError } from "@connectrpc/connect";
import { formatConfigError } from "../../config/config-error.js";
import { type GlobalConfig, readGlobalConfig } from "../../config/global-config.js";
import { globalConfigPath } from "../../config/paths.js";
import { UnknownPolicyRepoError } from "../../errors.js";
import { short } from "../../policy/clone.js";
import { remoteTakesToken, type SyncResult, syncPolicyRepo } from "../../policy/sync.js";
import { ruleClient, unreachable } from "../../rpc/client.js";
import { readTokenFile } from "../../rpc/credentials.js";
import { type Common, EXIT, type Io } from "../io.js";

type Outcome =
  | { readonly ok: true; readonly result: SyncResult }
  | { readonly ok: false; readonly repo: string; readonly error: string };

type DaemonOutcome =
  | { readonly state: "none_synced" }
  | { readonly state: "not_running"; readonly socket: string }
  | { readonly state: "no_token"; readonly message: string }
  | { readonly state: "reloaded"; readonly repo: string; readonly loaded: number; readonly disabled: number }
  | { readonly state: "error"; readonly repo: string; readonly message: string };

export async function runPolicySync(name: string | undefined, options: Common, io: Io): Promise<number> {
  const file = options.config ?? globalConfigPath(io.env);
  const read = await readGlobalConfig(file, io.env, { required: options.config !== undefined });
  if (!read.ok) {
    io.err(`harness policy sync: the global config does not load:`);
    for (const e of read.errors) io.err(formatConfigError(e));
    return EXIT.usage;
  }
  const config = read.config;
  const repos = name === undefined ? config.policyRepos : config.policyRepos.filter((r) => r.name === name);
  if (name !== undefined && repos.length === 0) {
    io.err(`harness policy sync: ${new UnknownPolicyRepoError(name).message}`);
    return EXIT.failed;
  }
  const outcomes: Outcome[] = [];
  for (const repo of repos) {
    try {
      // The forge token of an https remote, the one `harness rules propose` reads (docs/decisions/0009).
      const token =
        repo.credentialFile !== undefined && remoteTakesToken(repo.remote)
          ? await readTokenFile(repo.credentialFile).catch((e: unknown) => {
              throw new Error(`policy repo ${repo.name}: credential_file: ${(e as Error).message}`);
            })
          : undefined;
      outcomes.push({ ok: true, result: await syncPolicyRepo(repo, io.env, token) });
    } catch (e) {
      outcomes.push({ ok: false, repo: repo.name, error: (e as Error).message });
    }
  }
  const daemon = await tellDaemon(
    config,
    options.socket,
    outcomes.flatMap((o) => (o.ok ? [o.result] : [])),
  );
  if (options.json === true) io.out(JSON.stringify(jsonOf(outcomes, daemon)));
  else {
    if (repos.length === 0) io.out("no [policy_repo.*] is declared in the global config; nothing to sync");
    for (const o of outcomes)
      io[o.ok ? "out" : "err"](o.ok ? describe(o.result) : `harness policy sync: ${o.error}`);
    const line = describeDaemon(daemon);
    if (line !== undefined) io[daemon.state === "error" || daemon.state === "no_token" ? "err" : "out"](line);
  }
  if (outcomes.some((o) => !o.ok)) return EXIT.failed;
  if (daemon.state === "no_token") return EXIT.usage;
  if (daemon.state === "error") return EXIT.error;
  return EXIT.ok;
}

/** `PolicySynced` for each repo synced, the last reload's counts reported; stops at the first refusal. */
async function tellDaemon(
  config: GlobalConfig,
  socketOption: string | undefined,
  synced: readonly SyncResult[],
): Promise<DaemonOutcome> {
  if (synced.length === 0) return { state: "none_synced" };
  const socket = socketOption ?? config.server.socket;
  let token: string | undefined;
  try {
    token = await readTokenFile(config.server.controlTokenFile);
  } catch (e) {
    // The daemon writes the token on its first start: without one, see whether any daemon answers.
    try {
      await ruleClient({ socketPath: socket }).getStatus({});
    } catch (probe) {
      if (unreachable(probe)) return { state: "not_running", socket };
    }
    return { state: "no_token", message: `the operator's control token is needed: ${(e as Error).message}` };
  }
  const client = ruleClient({ socketPath: socket }, token);
  let last: DaemonOutcome = { state: "none_synced" };
  for (const s of synced) {
    try {
      const r = await client.policySynced({ repo: s.repo, commit: s.commit });
      last = {
        state: "reloaded",
        repo: s.repo,
        loaded: r.reload?.loaded ?? 0,
        disabled: r.reload?.disabled.length ?? 0,
      };
    } catch (e) {
      if (unreachable(e)) return { state: "not_running", socket };
      return {
        state: "error",
        repo: s.repo,
        message: e instanceof ConnectError ? e.rawMessage : (e as Error).message,
      };
    }
  }
  return last;
}

function describe(r: SyncResult): string {
  const switched = r.switchedFrom === undefined ? "" : ` (switched back from ${r.switchedFrom})`;
  if (r.action === "cloned") return `${r.repo}: cloned ${r.branch} at ${short(r.commit)} into ${r.dir}`;
  if (r.action === "up_to_date") return `${r.repo}: ${r.branch} up to date at ${short(r.commit)}${switched}`;
  return `${r.repo}: fast-forwarded ${r.branch} ${short(r.from ?? "")}..${short(r.commit)}${switched}`;
}

function describeDaemon(d: DaemonOutcome): string | undefined {
  switch (d.state) {
    case "none_synced":
      return undefined;
    case "not_running":
      return `daemon: none answers on ${d.socket}; it loads the synced clones when it starts`;
    case "reloaded":
      return `daemon: reloaded: ${d.loaded} rules loaded, ${d.disabled} disabled (harness rules list)`;
    case "no_token":
      return `harness policy sync: the clones are synced, but the daemon was not told: ${d.message}`;
    case "error":
      return `harness policy sync: the clones are synced, but the daemon did not reload after ${d.repo}: ${d.message}`;
    default:
      return d satisfies never;
  }
}

const jsonOf = (outcomes: readonly Outcome[], daemon: DaemonOutcome) => ({
  repos: outcomes.map((o) =>
    o.ok
      ? {
          name: o.result.repo,
          dir: o.result.dir,
          branch: o.result.branch,
          action: o.result.action,
          ...(o.result.from === undefined ? {} : { from: o.result.from }),
          commit: o.result.commit,
          ...(o.result.switchedFrom === undefined ? {} : { switched_from: o.result.switchedFrom }),
        }
      : { name: o.repo, error: o.error },
  ),
  daemon,
});
