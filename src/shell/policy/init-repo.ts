/**
 * `harness policy init DIR`: a local policy repo to start from, so a first hold needs no reading of
 * the source. It holds one example hold rule on an agent's tool call, its test (`docs/policy-repo.md`'s
 * `tests/<name>.toml`, which `harness rules lint` runs) and a short README, committed on `main`. It
 * refuses a DIR that is not empty, so it never mixes its files into someone's work.
 */
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { loadRuleFile } from "../../core/load-rule.js";
import { git } from "./git.js";

export const EXAMPLE_RULE = "first-hold";

/**
 * An attempt (a PreToolUse, `docs/decisions/0005-attempt-event.md`) to edit the CI workflow holds the
 * agent's harness: sessions that start later are refused until the evidence is an hour old (REQ-11's
 * re-evaluation of the `exists` on ticks) or the operator clears it.
 */
const RULE_TEXT = `name = "${EXAMPLE_RULE}"
description = "An agent tried to edit the CI workflow: hold its harness, so no new session starts until someone looks. An example from harness policy init: make it yours."
on = "attempt_event"
when = '''
event.action == "edit" && ".github/workflows/ci.yml" in event.paths
  && exists({"harness": event.harness, "action": "edit", "path": ".github/workflows/ci.yml"}, duration("1h"))
'''
level = "hold"
cooldown = "1h"
target = "harness"
message = "{{harness}} tried to edit .github/workflows/ci.yml (run {{run}}): held until the operator looks"
`;

const TEST_TEXT = `# Cases for rules/${EXAMPLE_RULE}.toml: harness rules lint runs them.

[[case]]
name = "an edit of the CI workflow holds the harness"
rows = [
  { admitted = 2026-10-01T09:00:00Z, type = "tool", harness = "impl", run = "impl#s1", tool = "Edit", action = "edit", paths = ["src/a.ts"] },
  { admitted = 2026-10-01T09:01:00Z, type = "tool", harness = "impl", run = "impl#s1", tool = "Edit", action = "edit", paths = [".github/workflows/ci.yml"] },
]
fires = [{ seq = 2, target = "impl" }]

[[case]]
name = "reading it does not"
rows = [
  { admitted = 2026-10-01T09:00:00Z, type = "tool", harness = "impl", run = "impl#s1", tool = "Read", action = "read", paths = [".github/workflows/ci.yml"] },
]
fires = []
`;

const README_TEXT = `# Harness policy

Rules the harness daemon serves once this repo is declared as a \`[policy_repo.<name>]\` and synced
(\`harness policy sync\`). \`rules/<name>.toml\` are the rules, \`tests/<name>.toml\` their cases;
\`harness rules lint .\` checks both. A rule that arrives by sync shadows for \`shadow_period\` (7 days by
default) before it acts, and acts at hold or stop only once the operator lists it in
\`[memory.rules] enforce\` (\`harness rules enforce <name>\` prints the line).
`;

export interface InitResult {
  readonly dir: string;
  /** A name for `[policy_repo.<name>]`, from the directory's: `^[a-z][a-z0-9-]*$`. */
  readonly repoName: string;
  readonly rule: string;
  /** The example rule's content hash, as the daemon will load it. */
  readonly hash: string;
}

export class NotEmptyError extends Error {
  constructor(readonly dir: string) {
    super(`${dir} is not empty: harness policy init makes a new repo in an empty or absent directory`);
  }
}

/** The directory's name as a policy repo name, or `local` when nothing of it fits. */
export function repoNameOf(dir: string): string {
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^[^a-z]+/, "")
    .replace(/-+$/, "")
    .slice(0, 63);
  return name === "" ? "local" : name;
}

export async function initPolicyRepo(dirArg: string, env: NodeJS.ProcessEnv): Promise<InitResult> {
  const dir = resolve(dirArg);
  let entries: string[] = [];
  try {
    entries = readdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  if (entries.length > 0) throw new NotEmptyError(dir);
  const load = loadRuleFile(`rules/${EXAMPLE_RULE}.toml`, RULE_TEXT);
  if (!load.ok) throw new Error(`the example rule does not load: ${load.problem.message}`);

  mkdirSync(join(dir, "rules"), { recursive: true });
  mkdirSync(join(dir, "tests"));
  writeFileSync(join(dir, "rules", `${EXAMPLE_RULE}.toml`), RULE_TEXT);
  writeFileSync(join(dir, "tests", `${EXAMPLE_RULE}.toml`), TEST_TEXT);
  writeFileSync(join(dir, "README.md"), README_TEXT);
  const local = { mode: "local", env } as const;
  await git(["init", "-q", "--initial-branch=main", dir], local);
  const inRepo = { ...local, repo: dir };
  await git(["add", "-A"], inRepo);
  await git(
    [
      "-c",
      "user.name=harness-rules",
      "-c",
      "user.email=harness-rules@localhost",
      "-c",
      "commit.gpgsign=false",
      "commit",
      "-q",
      "-m",
      `${EXAMPLE_RULE}: an example hold rule on an agent's tool call, and its test`,
    ],
    inRepo,
  );
  return { dir, repoName: repoNameOf(dir), rule: EXAMPLE_RULE, hash: load.rule.hash };
}
