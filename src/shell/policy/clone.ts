/**
 * What the daemon reads of a policy clone (SPEC-0029 REQ-2), with local git commands only (rev-parse,
 * symbolic-ref, config --get, status, ls-tree, cat-file): the default-branch gate's verdict, and the
 * rule files of one commit, read from git's objects rather than from the working tree, so a clone
 * edited by hand can still serve the commit it was last clean at.
 */

import * as fs from "node:fs";
import { MAX_RULE_FILE_BYTES, MAX_RULE_FILES_PER_REPO } from "../../core/rule-file-bytes.js";
import { catFileBatch, type GitOptions, git, gitTest, notFound } from "./git.js";

export type CloneState = "clean" | "dirty" | "off_branch" | "missing";

export interface CloneInspection {
  readonly state: CloneState;
  /** The branch the gate wants: the configured one, else the default branch recorded at clone. */
  readonly branch: string | undefined;
  /** The commit HEAD points at; undefined for a missing clone or one without commits. */
  readonly head: string | undefined;
  readonly detail: string;
}

/** Where the clone records its remote's default branch when it is made (`git config` in the clone). */
export const DEFAULT_BRANCH_KEY = "harness.defaultBranch";

const local = (repo: string, env: NodeJS.ProcessEnv): GitOptions => ({ repo, mode: "local", env });

/** A commit as messages and `doctor` show it. */
export const short = (commit: string) => commit.slice(0, 12);

/** The branch a clone serves: the configured one, else the one recorded when it was cloned. */
export async function servedBranch(
  dir: string,
  configured: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<string | undefined> {
  if (configured !== undefined) return configured;
  try {
    return (await git(["config", "--get", DEFAULT_BRANCH_KEY], local(dir, env))).trim() || undefined;
  } catch (e) {
    return notFound(e);
  }
}

/** The default-branch gate: is the clone on its branch, with nothing changed in its working tree? */
export async function inspectClone(
  dir: string,
  configured: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<CloneInspection> {
  if (!fs.existsSync(`${dir}/.git`))
    return { state: "missing", branch: configured, head: undefined, detail: `no clone at ${dir}` };
  const o = local(dir, env);
  const branch = await servedBranch(dir, configured, env);
  const head = await revParse(dir, "HEAD", env);
  if (branch === undefined)
    return {
      state: "off_branch",
      branch,
      head,
      detail: `no branch is configured and the clone records no default branch (${DEFAULT_BRANCH_KEY})`,
    };
  const ref = (await git(["symbolic-ref", "-q", "HEAD"], o).catch((e: unknown) => notFound(e) ?? "")).trim();
  if (ref !== `refs/heads/${branch}`) {
    const where =
      ref === ""
        ? `detached at ${head === undefined ? "nothing" : short(head)}`
        : `on ${ref.replace(/^refs\/heads\//, "")}`;
    return { state: "off_branch", branch, head, detail: `HEAD is ${where}, not ${branch}` };
  }
  if (head === undefined) return { state: "missing", branch, head, detail: `${branch} has no commits` };
  const changes = await uncommittedChanges(dir, env);
  if (changes !== undefined) return { state: "dirty", branch, head, detail: changes };
  return { state: "clean", branch, head, detail: `${branch} at ${short(head)}` };
}

/** What `git status` shows changed or untracked in the working tree, said briefly; undefined: nothing. */
export async function uncommittedChanges(dir: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const changed = changedPaths(
    await git(
      ["--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=normal"],
      local(dir, env),
    ),
  );
  if (changed.length === 0) return undefined;
  const named = changed.slice(0, 3).join(", ");
  return `${changed.length} uncommitted change${changed.length === 1 ? "" : "s"} (${named}${changed.length > 3 ? ", …" : ""})`;
}

/** The paths of `status --porcelain=v1 -z`: `XY path`, a rename or copy followed by its old path. */
function changedPaths(porcelain: string): string[] {
  const entries = porcelain.split("\0");
  const paths: string[] = [];
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as string;
    if (entry.length < 4) continue;
    paths.push(entry.slice(3));
    if (/[RC]/.test(entry.slice(0, 2))) i++;
  }
  return paths;
}

/** The commit `rev` names in the clone, or undefined when it names none. */
export async function revParse(
  dir: string,
  rev: string,
  env: NodeJS.ProcessEnv,
): Promise<string | undefined> {
  try {
    return (
      (await git(["rev-parse", "--verify", "-q", `${rev}^{commit}`], local(dir, env))).trim() || undefined
    );
  } catch (e) {
    return notFound(e);
  }
}

/** Whether the clone's object store holds `commit`. */
export function hasCommit(dir: string, commit: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  return gitTest(["cat-file", "-e", `${commit}^{commit}`], local(dir, env));
}

/** One `rules/<name>.toml` of a commit: its bytes, or only its size when that is over the limit. */
export type RuleFileBlob =
  | { readonly file: string; readonly bytes: Uint8Array }
  | { readonly file: string; readonly unread: "too_large" | "past_limit" | "symlink" };

// `<mode> <type> <oid> <size>\t<path>`, as `ls-tree -l` prints each entry.
const LS_TREE_ENTRY = /^(\d+) (\w+) ([0-9a-f]+) +(\d+|-)\t(.*)$/s;
const RULE_FILE = /^rules\/([^/]+)\.toml$/;

/**
 * The rule files at the top level of `rules/` in `commit`, in name order. Subdirectories and files of
 * other names are not rule files, and every other directory of the repo is never listed; a symlink of a
 * rule file's name is returned unread, to be disabled with its reason.
 */
export async function readRuleFiles(
  dir: string,
  commit: string,
  env: NodeJS.ProcessEnv,
): Promise<RuleFileBlob[]> {
  const o = local(dir, env);
  const listing = await git(["ls-tree", "-z", "-l", commit, "--", "rules/"], o);
  const wanted: { file: string; oid: string }[] = [];
  const out: RuleFileBlob[] = [];
  // ls-tree lists in path order, so the files counted first are the first by name.
  let ruleFiles = 0;
  for (const entry of listing.split("\0")) {
    const m = LS_TREE_ENTRY.exec(entry);
    if (m === null) continue;
    const [, mode, type, oid, size, file] = m as unknown as [string, string, string, string, string, string];
    const link = mode === "120000";
    if (type !== "blob" || (mode !== "100644" && mode !== "100755" && !link) || !RULE_FILE.test(file))
      continue;
    // Files past the core's limits, and links, are disabled unread, with the reasons lint gives them.
    if (++ruleFiles > MAX_RULE_FILES_PER_REPO) out.push({ file, unread: "past_limit" });
    else if (link) out.push({ file, unread: "symlink" });
    else if (Number(size) > MAX_RULE_FILE_BYTES) out.push({ file, unread: "too_large" });
    else wanted.push({ file, oid });
  }
  const byOid = new Map<string, string[]>();
  for (const w of wanted) byOid.set(w.oid, [...(byOid.get(w.oid) ?? []), w.file]);
  await catFileBatch([...byOid.keys()], o, ({ oid, bytes }) => {
    for (const file of byOid.get(oid) ?? []) out.push({ file, bytes });
  });
  return out.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}
