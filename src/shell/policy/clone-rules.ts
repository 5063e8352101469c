/**
 * The daemon's policy rule source (SPEC-0029 REQ-2): for each declared repo, the rules of the commit
 * its clone serves. A clone clean on its branch serves HEAD, which becomes the repo's last good commit;
 * a dirty or off-branch clone keeps serving the last good commit, read from git's objects, so a restart
 * beside it serves what was served before it; a missing clone serves nothing. A clean commit with a
 * broken rule file is still served: that file's rule is disabled with its reason, the others load.
 * Only local reads run here, and only when a rule set is (re)loaded.
 */
import type { RuleLoad } from "../../core/compile-rule.js";
import { loadRuleFileBytes } from "../../core/load-rule.js";
import type { RuleProblem } from "../../core/rule-file.js";
import { ruleFileIsSymlink, ruleFilePastLimit, ruleFileTooLarge } from "../../core/rule-file-bytes.js";
import type { PolicyRepoConfig } from "../config/global-config.js";
import { policyClonePath } from "../config/paths.js";
import type { LastGood } from "../store/last-good-commits.js";
import {
  type CloneState,
  hasCommit,
  inspectClone,
  type RuleFileBlob,
  readRuleFiles,
  short,
} from "./clone.js";

/** Why a rule file read unread is disabled. */
const UNREAD_PROBLEM: Readonly<
  Record<Extract<RuleFileBlob, { unread: unknown }>["unread"], (file: string) => RuleProblem>
> = {
  too_large: ruleFileTooLarge,
  past_limit: ruleFilePastLimit,
  symlink: ruleFileIsSymlink,
};

/**
 * Each repo's last good commit: read by every load, recorded only by the daemon's. Asynchronous, as
 * the daemon's store is; loads run one at a time (the daemon's reloads take turns), so a record and a
 * later load's read never cross.
 */
export interface LastGoodRecord {
  get(repo: string): Promise<LastGood | undefined>;
  record(good: LastGood): Promise<void>;
}

export interface PolicyCloneStatus {
  readonly name: string;
  readonly state: CloneState;
  readonly detail: string;
  /** The commit whose rules are served; undefined when none are. */
  readonly served: string | undefined;
}

export interface PolicyLoads {
  readonly repo: string;
  readonly loads: readonly RuleLoad[];
}

export interface PolicySourceLoad {
  readonly policy: readonly PolicyLoads[];
  readonly clones: readonly PolicyCloneStatus[];
}

export class PolicyRuleSource {
  /** The loads of the commit last served per repo: a reload of an unchanged commit compiles nothing. */
  private readonly served = new Map<
    string,
    { readonly commit: string; readonly loads: readonly RuleLoad[] }
  >();

  constructor(
    private readonly lastGood: LastGoodRecord,
    private readonly env: NodeJS.ProcessEnv,
    private readonly clock: () => number,
  ) {}

  async load(repos: readonly PolicyRepoConfig[]): Promise<PolicySourceLoad> {
    const policy: PolicyLoads[] = [];
    const clones: PolicyCloneStatus[] = [];
    for (const repo of repos) {
      const { status, loads } = await this.loadRepo(repo);
      clones.push(status);
      if (loads.length > 0) policy.push({ repo: repo.name, loads });
    }
    for (const name of [...this.served.keys()])
      if (!repos.some((r) => r.name === name)) this.served.delete(name);
    return { policy, clones };
  }

  private async loadRepo(
    repo: PolicyRepoConfig,
  ): Promise<{ status: PolicyCloneStatus; loads: readonly RuleLoad[] }> {
    const dir = policyClonePath(this.env, repo.name);
    const status = (state: CloneState, detail: string, served: string | undefined) => ({
      name: repo.name,
      state,
      detail,
      served,
    });
    try {
      const clone = await inspectClone(dir, repo.branch, this.env);
      if (clone.state === "clean" && clone.head !== undefined && clone.branch !== undefined) {
        const loads = await this.rulesAt(repo.name, dir, clone.head);
        await this.lastGood.record({
          repo: repo.name,
          branch: clone.branch,
          commit: clone.head,
          loadedAt: this.clock(),
        });
        return { status: status("clean", clone.detail, clone.head), loads };
      }
      if (clone.state === "missing") {
        this.served.delete(repo.name);
        return {
          status: status("missing", `${clone.detail}; run harness policy sync ${repo.name}`, undefined),
          loads: [],
        };
      }
      const good = await this.lastGood.get(repo.name);
      if (good === undefined || !(await hasCommit(dir, good.commit, this.env)))
        return {
          status: status(
            clone.state,
            `${clone.detail}; no rules served (${good === undefined ? "no clean commit loaded yet" : `last good commit ${short(good.commit)} is not in the clone`})`,
            undefined,
          ),
          loads: [],
        };
      const loads = await this.rulesAt(repo.name, dir, good.commit);
      return {
        status: status(
          clone.state,
          `${clone.detail}; serving last good commit ${short(good.commit)}`,
          good.commit,
        ),
        loads,
      };
    } catch (e) {
      // A clone git cannot read keeps what this daemon last served from it, as a dirty one would.
      const kept = this.served.get(repo.name);
      return {
        status: status(
          "missing",
          `cannot read the clone at ${dir}: ${(e as Error).message}${kept === undefined ? "" : `; keeping commit ${short(kept.commit)}`}`,
          kept?.commit,
        ),
        loads: kept?.loads ?? [],
      };
    }
  }

  private async rulesAt(repo: string, dir: string, commit: string): Promise<readonly RuleLoad[]> {
    const cached = this.served.get(repo);
    if (cached?.commit === commit) return cached.loads;
    const loads = (await readRuleFiles(dir, commit, this.env)).map(
      (f): RuleLoad =>
        "bytes" in f
          ? loadRuleFileBytes(f.file, f.bytes)
          : {
              ok: false,
              problem: UNREAD_PROBLEM[f.unread](f.file),
            },
    );
    this.served.set(repo, { commit, loads });
    return loads;
  }
}
