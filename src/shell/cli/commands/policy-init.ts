/**
 * `harness policy init DIR`: makes a local policy repo with an example hold rule and its test
 * (`../../policy/init-repo.ts`), and prints the `[policy_repo.<name>]` table to add to the global config
 * and the sync that follows. It writes nothing outside DIR. Exit 0 when made; 1 when DIR is not empty;
 * 4 when git or the file system failed.
 */
import { readGlobalConfig } from "../../config/global-config.js";
import { globalConfigPath } from "../../config/paths.js";
import { type InitResult, initPolicyRepo, NotEmptyError } from "../../policy/init-repo.js";
import { type Common, EXIT, type Io } from "../io.js";
import { editText } from "../render/config-edit.js";
import { printed } from "../render/printable.js";

export async function runPolicyInit(dir: string, options: Common, io: Io): Promise<number> {
  let made: InitResult;
  try {
    made = await initPolicyRepo(dir, io.env);
  } catch (e) {
    io.err(`harness policy init: ${(e as Error).message}`);
    return e instanceof NotEmptyError ? EXIT.failed : EXIT.error;
  }
  const file = options.config ?? globalConfigPath(io.env);
  const name = await freeRepoName(file, made.repoName, io.env);
  const lines = [`[policy_repo.${name}]`, `remote = ${JSON.stringify(made.dir)}`];
  if (options.json === true) {
    io.out(
      JSON.stringify({ dir: made.dir, rule: made.rule, hash: made.hash, repo: name, config: file, lines }),
    );
    return EXIT.ok;
  }
  const out = printed(io.out);
  out(`made a policy repo in ${made.dir} (branch main, one commit):`);
  out(
    `  rules/${made.rule}.toml   a hold rule: an agent's attempt to edit .github/workflows/ci.yml holds its harness`,
  );
  out(`  tests/${made.rule}.toml   its test (harness rules lint ${made.dir} runs it)`);
  out("");
  for (const line of editText({ kind: "append", file, lines })) out(line);
  out(`then: harness policy sync ${name}`);
  return EXIT.ok;
}

/** `wanted`, or `wanted-2`, `wanted-3`…: the first name the config does not declare yet. */
async function freeRepoName(file: string, wanted: string, env: NodeJS.ProcessEnv): Promise<string> {
  const loaded = await readGlobalConfig(file, env);
  const declared = new Set(loaded.ok ? loaded.config.policyRepos.map((r) => r.name) : []);
  let name = wanted;
  for (let n = 2; declared.has(name); n++) name = `${wanted}-${n}`;
  return name;
}
