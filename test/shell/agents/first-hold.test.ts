/**
 * A first hold in five commands, and enforcement pinned to content, end to end: the commands of
 * docs/agents.md's first screen, taken from its fenced block and run as written (through `sh`, with
 * `harness` on PATH), against a real daemon; the two config edits made from what the commands printed,
 * as an operator would; then a real `harness hook claude-code` whose tool call the hold denies. A pin
 * of the first content stops enforcing once a sync brings a changed rule, until pinned again.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, expect, it } from "vitest";
import { fires, holds } from "../../support/store-reads.js";
import { type CliResult, runProcess, TestFleet } from "../daemon-harness.js";
import { BIN, makeRepo, runHook } from "./hook-harness.js";
import { claudeCode } from "./payloads.js";

const DOC = fs.readFileSync(new URL("../../../docs/agents.md", import.meta.url), "utf8");

/** The first ```sh block under "## A first hold in five commands": the commands the test runs. */
function firstScreen(): string[] {
  const section = DOC.split("## A first hold in five commands\n")[1] ?? "";
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error("docs/agents.md has no sh block under its first-hold heading");
  return block.split("\n").filter((l) => l.trim() !== "");
}

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/**
 * A fleet (its daemon started unless `start` is false) whose HOME holds a `bin/harness` that runs the
 * built CLI, as an installed one would.
 */
async function fleetWithHarness(
  start = true,
): Promise<{ fleet: TestFleet; sh: (line: string) => Promise<CliResult> }> {
  const fleet = new TestFleet({ config: '[agents]\nlisten = ""' });
  cleanup.push(() => fleet.dispose());
  const bin = path.join(fleet.root, "bin");
  fs.mkdirSync(bin);
  fs.writeFileSync(
    path.join(bin, "harness"),
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`,
    { mode: 0o755 },
  );
  if (start) await fleet.start();
  const env = { ...fleet.env, PATH: `${bin}:${process.env.PATH}` };
  const sh = (line: string) => runProcess("/bin/sh", ["-c", line], { env, cwd: fleet.root });
  return { fleet, sh };
}

interface Edit {
  readonly file: string;
  /** Insert after this line (0: at the start), replacing `replace` lines; undefined: append. */
  readonly after: number | undefined;
  readonly replace: number;
  readonly lines: string[];
}

/**
 * The edits a command printed (`cli/render/config-edit.ts`), made as printed: a head naming the file
 * and the place, a blank line, the lines, a blank line.
 */
function editsIn(stdout: string): Edit[] {
  const lines = stdout.split("\n");
  const edits: Edit[] = [];
  for (const [i, head] of lines.entries()) {
    const append = /^add to (.+):$/.exec(head);
    const under = /^add under \[[a-z.]+\] \(line (\d+)\) in (.+):$/.exec(head);
    const replace = /^in (.+), replace [a-z_]+ \(line (\d+)\) with:$/.exec(head);
    if (append === null && under === null && replace === null) continue;
    const body: string[] = [];
    for (let j = i + 2; j < lines.length && lines[j] !== ""; j++) body.push(lines[j] as string);
    if (append !== null) edits.push({ file: append[1] as string, after: undefined, replace: 0, lines: body });
    if (under !== null)
      edits.push({ file: under[2] as string, after: Number(under[1]), replace: 0, lines: body });
    if (replace !== null)
      edits.push({ file: replace[1] as string, after: Number(replace[2]) - 1, replace: 1, lines: body });
  }
  return edits;
}

/** Applies the edits, the lowest in the file last, so each line number still points where it did. */
function makeEdits(edits: readonly Edit[]): void {
  expect(edits.length, "the command printed an edit").toBeGreaterThan(0);
  const order = [...edits].sort(
    (a, b) => (b.after ?? Number.MAX_SAFE_INTEGER) - (a.after ?? Number.MAX_SAFE_INTEGER),
  );
  for (const e of order) {
    const text = fs.existsSync(e.file) ? fs.readFileSync(e.file, "utf8") : "";
    const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
    if (e.after === undefined) lines.push(...e.lines);
    else lines.splice(e.after, e.replace, ...e.lines);
    fs.writeFileSync(e.file, `${lines.join("\n")}\n`);
  }
}

/** Runs the doc's lines in order: a command through `sh`, an `# edit:` line as the edits last printed. */
async function runFirstScreen(sh: (line: string) => Promise<CliResult>): Promise<Map<string, CliResult>> {
  const results = new Map<string, CliResult>();
  let last: CliResult | undefined;
  for (const line of firstScreen()) {
    if (line.startsWith("# edit:")) {
      makeEdits(editsIn(last?.stdout ?? ""));
      continue;
    }
    last = await sh(line);
    const verb = line.split("#")[0]?.trim() as string;
    expect(last.code, `${verb}\n${last.stdout}\n${last.stderr}`).toBe(0);
    results.set(verb.split(" ").slice(1, 3).join(" "), last);
  }
  return results;
}

/** A Claude Code PreToolUse editing the CI workflow, from session `session`. */
const ciEdit = (repo: string, session: string) => ({
  ...claudeCode(repo, session).PreToolUse,
  tool_input: { file_path: `${repo}/.github/workflows/ci.yml`, old_string: "a", new_string: "b" },
});

function tempRepo(): string {
  const repo = makeRepo();
  cleanup.push(() => fs.rmSync(repo, { recursive: true, force: true }));
  return repo;
}

it("From nothing to a hold in five commands", async () => {
  const { fleet, sh } = await fleetWithHarness();
  const repo = tempRepo();
  const commands = firstScreen().filter((l) => !l.startsWith("#"));
  expect(commands).toHaveLength(5);

  const out = await runFirstScreen(sh);
  expect(out.get("rules enforce")?.stdout).toMatch(/^enforce = \["first-hold@[0-9a-f]{64}"\]$/m);
  expect(out.get("doctor")?.stdout).toMatch(
    /enforced: first-hold acts at hold \(active, pinned to [0-9a-f]{12}\)/,
  );

  // A session tries to edit the workflow: the rule fires at hold and holds the harness.
  const first = await runHook(fleet, "claude-code", JSON.stringify(ciEdit(repo, "sess-first")));
  expect(first.code).toBe(0);
  await fleet.until(() => holds(fleet, { harness: "impl", inForce: true }).length === 1, "the hold on impl");
  expect(holds(fleet, { harness: "impl", inForce: true })[0]?.rule).toBe("first-hold");

  // A session that starts later is denied its first tool call, naming the rule and the way out.
  const later = await runHook(
    fleet,
    "claude-code",
    JSON.stringify(claudeCode(repo, "sess-later").PreToolUse),
  );
  expect(later.code).toBe(0);
  const answer = JSON.parse(later.stdout).hookSpecificOutput;
  expect(answer).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" });
  expect(answer.permissionDecisionReason).toContain("first-hold");
  expect(answer.permissionDecisionReason).toContain("harness rules clear impl");
}, 60_000);

it("A changed pinned rule is no longer enforced", async () => {
  const { fleet, sh } = await fleetWithHarness();
  const repo = tempRepo();
  const out = await runFirstScreen(sh);
  const pinned = /first-hold@([0-9a-f]{64})/.exec(out.get("rules enforce")?.stdout ?? "")?.[1] as string;
  // Enforced as pinned: a try at the workflow holds the harness.
  expect((await runHook(fleet, "claude-code", JSON.stringify(ciEdit(repo, "sess-ci")))).code).toBe(0);
  await fleet.until(
    () => holds(fleet, { harness: "impl", inForce: true }).length === 1,
    "the pinned rule's hold",
  );

  // The policy repo's rule changes what it does (another path): a sync brings it to the daemon.
  const policy = path.join(fleet.root, "harness-policy");
  const ruleFile = path.join(policy, "rules", "first-hold.toml");
  fs.writeFileSync(
    ruleFile,
    fs.readFileSync(ruleFile, "utf8").replaceAll(".github/workflows/ci.yml", "Makefile"),
  );
  const git = (...args: string[]) =>
    sh(`git -C ${JSON.stringify(policy)} -c user.name=op -c user.email=op@example.com ${args.join(" ")}`);
  expect((await git("commit", "-qam", "'first-hold: the Makefile too'")).code).toBe(0);
  const synced = await sh("harness policy sync harness-policy");
  expect(synced.code, synced.stderr).toBe(0);

  // Not enforced: the sync's reload released the hold, doctor fails naming the stale pin, and the rule
  // acts at notify.
  expect(holds(fleet, { harness: "impl" })).toMatchObject([{ rule: "first-hold", release_cause: "reload" }]);
  const doctor = await sh("harness doctor");
  expect(doctor.code).toBe(1);
  const stale =
    /enforce pins first-hold@([0-9a-f]{12})…, but the loaded first-hold has hash ([0-9a-f]{64})/.exec(
      doctor.stdout,
    );
  expect(stale?.[1]).toBe(pinned.slice(0, 12));
  const loaded = stale?.[2] as string;
  expect(loaded).not.toBe(pinned);
  expect(doctor.stdout).not.toContain("enforced: first-hold");
  const shown = await sh("harness rules show first-hold --json");
  expect(JSON.parse(shown.stdout)).toMatchObject({
    enforced: false,
    effective_level: "notify",
    stale_pins: [pinned],
  });
  expect((await sh("harness rules show first-hold")).stdout).toMatch(
    /^enforce +pinned in \[memory\.rules\] enforce to [0-9a-f]{12}…, not this hash: acts at notify, not hold, until pinned again/m,
  );

  const makefile = {
    ...claudeCode(repo, "sess-make").PreToolUse,
    tool_input: { file_path: `${repo}/Makefile`, old_string: "a", new_string: "b" },
  };
  expect((await runHook(fleet, "claude-code", JSON.stringify(makefile))).code).toBe(0);
  await fleet.until(() => fires(fleet, { rule: "first-hold" }).length === 2, "the changed rule's fire");
  expect(fires(fleet, { rule: "first-hold" })[1]).toMatchObject({
    declared_level: "hold",
    effective_level: "notify",
  });
  expect(holds(fleet, { harness: "impl", inForce: true })).toEqual([]);
  const later = await runHook(
    fleet,
    "claude-code",
    JSON.stringify(claudeCode(repo, "sess-later").PreToolUse),
  );
  expect(later.stdout).not.toContain('"deny"');

  // Pinned again, to what is loaded now: enforced once more.
  const again = await sh("harness rules enforce first-hold");
  expect(again.stdout).toContain(`first-hold@${loaded}`);
  makeEdits(editsIn(again.stdout));
  expect((await sh("harness reload")).code).toBe(0);
  const healthy = await sh("harness doctor");
  expect(healthy.stdout).toContain(
    `enforced: first-hold acts at hold (active, pinned to ${loaded.slice(0, 12)})`,
  );
  expect(healthy.stdout).not.toContain("enforce pins");
}, 60_000);

it("policy init refuses a directory that is not empty, and touches nothing in it", async () => {
  const { fleet, sh } = await fleetWithHarness(false);
  const dir = path.join(fleet.root, "work");
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, "notes.txt"), "mine\n");
  const r = await sh(`harness policy init ${JSON.stringify(dir)}`);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`${dir} is not empty`);
  expect(fs.readdirSync(dir)).toEqual(["notes.txt"]);
}, 30_000);

it("rules enforce keeps the other entries, replaces the name's own, and prints nothing from a config that does not load", async () => {
  const fleet = new TestFleet({ enforce: ["nope", "budget-exhaustion-recurring"] });
  cleanup.push(() => fleet.dispose());
  await fleet.start();
  const r = await fleet.cli(["rules", "enforce", "budget-exhaustion-recurring"]);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/^enforce = \["nope", "budget-exhaustion-recurring@[0-9a-f]{64}"\]$/m);
  // A starter rule does not shadow: no shadow_period line is offered.
  expect(r.stdout).not.toContain("shadow_period");

  const config = path.join(fleet.env.XDG_CONFIG_HOME as string, "harness", "harness.toml");
  fs.writeFileSync(config, fs.readFileSync(config, "utf8").replace('"nope"', '"nope@1234"'));
  const broken = await fleet.cli(["rules", "enforce", "budget-exhaustion-recurring"]);
  expect(broken.code).toBe(2);
  expect(broken.stdout).toBe("");
  expect(broken.stderr).toContain("does not load");
}, 30_000);
