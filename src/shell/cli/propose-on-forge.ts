/**
 * `harness rules propose` as the CLI runs it: the global config read, the policy repo chosen, its forge
 * credential read, the pass (`../forge/propose-pass.ts`) run against the daemon, and its report printed.
 * The command's module (`commands/rules-propose.ts`) says what it promises.
 */
import { ConnectError } from "@connectrpc/connect";
import { diffFires } from "../backtest/fire-diff.js";
import { formatConfigError } from "../config/config-error.js";
import { type PolicyRepoConfig, readGlobalConfig } from "../config/global-config.js";
import { globalConfigPath } from "../config/paths.js";
import { detectForge } from "../forge/detect.js";
import { ForgeError } from "../forge/forge.js";
import { ProposalClone, proposalClonePath } from "../forge/proposal-clone.js";
import { type PassReport, proposePass, ReviewerIsAuthorError } from "../forge/propose-pass.js";
import { ForgeRemoteError, forgeRemote } from "../forge/remote.js";
import { ruleClient, unreachable } from "../rpc/client.js";
import { readTokenFile } from "../rpc/credentials.js";
import { backtestOnDaemon } from "./backtest-on-daemon.js";
import { failed } from "./client.js";
import { type Common, EXIT, type Io, table } from "./io.js";
import { clientTarget, controlToken, readToken } from "./target.js";

export interface ProposeOptions extends Common {
  readonly policyRepo?: string | undefined;
  readonly dryRun?: boolean | undefined;
  readonly includeSilent?: boolean | undefined;
}

const COMMAND = "rules propose";

/**
 * One propose pass on the chosen policy repo, as `harness rules propose` runs it and prints it; `harness
 * demo`'s operator runs it too. The exit codes are the command's.
 */
export async function proposeOnForge(options: ProposeOptions, io: Io): Promise<number> {
  const file = options.config ?? globalConfigPath(io.env);
  const read = await readGlobalConfig(file, io.env, { required: options.config !== undefined });
  if (!read.ok) {
    io.err(`harness ${COMMAND}: the global config does not load:`);
    for (const e of read.errors) io.err(formatConfigError(e));
    return EXIT.usage;
  }
  const config = read.config;
  const repo = chooseRepo(config.policyRepos, options.policyRepo, io);
  if (typeof repo === "number") return repo;
  if (repo.credentialFile === undefined) {
    io.err(
      `harness ${COMMAND}: [policy_repo.${repo.name}] has no credential_file; the forge token is read from it`,
    );
    return EXIT.failed;
  }
  let token: string;
  try {
    token = await readTokenFile(repo.credentialFile);
  } catch (e) {
    io.err(`harness ${COMMAND}: ${(e as Error).message}`);
    return EXIT.failed;
  }
  const target = await clientTarget({ ...options, env: io.env });
  // A dry run only reads: locally it needs no token, remotely the read token (else the control token).
  const c = options.dryRun !== true ? await controlToken(target, COMMAND) : await readToken(target, COMMAND);
  if ("error" in c) {
    io.err(c.error);
    return EXIT.usage;
  }
  const client = ruleClient(target.rpc, c.token);
  let report: PassReport;
  try {
    const remote = forgeRemote(repo.remote);
    const forge = await detectForge(remote, token, { declared: repo.forge });
    report = await proposePass({
      repo,
      shadowPeriodMs: config.memory.rules.shadowPeriod,
      rules: config.memory.rules,
      client,
      forge,
      clone: (login) =>
        ProposalClone.open(
          proposalClonePath(io.env, repo.name),
          remote.httpsUrl,
          { username: forge.gitUser(login), password: token },
          io.env,
          repo.commitAuthor,
        ),
      // With the loaded rule of the proposal's name beside it, so the body says what the merge changes.
      backtest: async (f, text, sinceMs) => {
        const r = await backtestOnDaemon(client, f, text, sinceMs, true);
        if (r.loaded === undefined) return { counts: r.counts, fires: r.fires };
        const { added, removed } = diffFires(r.loaded.fires, r.fires);
        const { hash, source, counts } = r.loaded;
        return {
          counts: r.counts,
          fires: r.fires,
          against: { hash, source, fires: counts.fires, added, removed },
        };
      },
      env: io.env,
      dryRun: options.dryRun === true,
      includeSilent: options.includeSilent === true,
      now: Date.now,
    });
  } catch (e) {
    if (e instanceof ReviewerIsAuthorError || e instanceof ForgeRemoteError) {
      io.err(`harness ${COMMAND}: ${e.message}`);
      return EXIT.failed;
    }
    if (e instanceof ForgeError) {
      io.err(`harness ${COMMAND}: ${repo.name}: the forge refused: ${e.message}`);
      return EXIT.error;
    }
    if (unreachable(e) || e instanceof ConnectError) return failed(COMMAND, target.where, e, io);
    io.err(`harness ${COMMAND}: ${repo.name}: ${(e as Error).message}`);
    return EXIT.error;
  }
  if (options.json === true) io.out(JSON.stringify(reportJson(report)));
  else for (const line of reportLines(report)) io.out(line);
  return report.outcomes.some((o) => o.action === "error") ? EXIT.error : EXIT.ok;
}

function chooseRepo(
  repos: readonly PolicyRepoConfig[],
  name: string | undefined,
  io: Io,
): PolicyRepoConfig | number {
  if (name !== undefined) {
    const repo = repos.find((r) => r.name === name);
    if (repo !== undefined) return repo;
    io.err(`harness ${COMMAND}: unknown policy repo: the global config declares no [policy_repo.${name}]`);
    return EXIT.failed;
  }
  if (repos.length === 1) return repos[0] as PolicyRepoConfig;
  if (repos.length === 0) {
    io.err(`harness ${COMMAND}: no [policy_repo.*] is declared in the global config; nothing to propose to`);
    return EXIT.failed;
  }
  io.err(
    `harness ${COMMAND}: --policy-repo is required: ${repos.length} policy repos are declared (${repos.map((r) => r.name).join(", ")})`,
  );
  return EXIT.usage;
}

const reportJson = (r: PassReport) => ({
  policy_repo: r.repo,
  forge: r.forge,
  login: r.login ?? null,
  dry_run: r.dryRun,
  proposals: r.outcomes.map((o) => ({
    id: o.id,
    name: o.name,
    action: o.action,
    detail: o.detail,
    ...(o.pull === undefined ? {} : { pr_number: o.pull.number, pr_url: o.pull.url }),
  })),
});

function reportLines(r: PassReport): string[] {
  const head = `${r.repo} (${r.forge}, as ${r.login ?? "the token's login (bot_login unset)"})${r.dryRun ? ": dry run, nothing changed" : ""}`;
  if (r.outcomes.length === 0) return [head, "no proposal to propose or read back"];
  return [
    head,
    ...table(
      ["ID", "NAME", r.dryRun ? "WOULD BE" : "NOW", "PULL REQUEST", "DETAIL"],
      r.outcomes.map((o) => [
        o.id,
        o.name,
        o.action,
        o.pull === undefined ? "-" : `#${o.pull.number} ${o.pull.url}`,
        o.detail.replace(/\s+/g, " ").slice(0, 300),
      ]),
    ),
  ];
}
