/**
 * Agents on two laptops and one rules daemon on a server (issue 32), over real network namespaces: the
 * daemon in the server namespace with TLS on its own address, each laptop in a namespace of its own with
 * a clone of the same repository, enrolled with a one-time code and running the hooks `harness agents
 * install --daemon https://…` wrote, as Claude Code runs them. The git facts are the laptops' own
 * (computed by their forwarders), which is what lets two machines' edits of one file meet.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fires, holds, journalRows } from "../../support/store-reads.js";
import { rowsOf } from "../agents/hook-harness.js";
import { edit, events, FleetLab, type Machine, RUN_NETNS } from "./fleet-lab.js";

/** A force push holds its whole harness, on every machine, until an operator clears it. */
const FORCE_PUSH_HOLDS = {
  name: "force-push-holds",
  text: `name = "force-push-holds"
description = "A force push holds the harness until someone looks."
on = "attempt_event"
when = 'event.tool == "Bash" && event.action == "exec"'
level = "hold"
cooldown = "1m"
target = "harness"
message = "{{harness}} tried a force push"
`,
};

describe.skipIf(!RUN_NETNS)("agents on two laptops, one daemon on a server", () => {
  let lab: FleetLab;
  let fleet: FleetLab["fleet"];
  let machines: readonly Machine[];
  beforeAll(async () => {
    lab = await FleetLab.start(2, { rules: [FORCE_PUSH_HOLDS], enforce: ["force-push-holds"] });
    fleet = lab.fleet;
    machines = lab.machines;
  }, 60_000);
  afterAll(async () => {
    await lab?.dispose();
  });
  const enrolmentCode = (m: Machine, harness: string, ttl?: string) => lab.enrolmentCode(m, harness, ttl);
  const install = (m: Machine, harness: string, code: string) => lab.install(m, harness, code);
  const hook = (m: Machine, harness: string, event: string, payload: unknown) =>
    lab.hook(m, harness, event, payload);

  it("An enrolment code works once and expires", async () => {
    const [one, two] = machines as [Machine, Machine];
    const code = await enrolmentCode(one, "dev1");
    const first = await install(one, "dev1", code);
    expect(first.code, first.stderr).toBe(0);
    // The same code handed to the second laptop is spent.
    fs.copyFileSync(code, path.join(two.laptop.root, "reused.code"));
    const reused = await install(two, "dev1", path.join(two.laptop.root, "reused.code"));
    expect(reused.code).not.toBe(0);
    expect(reused.stderr).toMatch(/unknown bearer token/);
    // A code a second long, used later, is refused the same way.
    const short = await enrolmentCode(two, "dev2", "1s");
    await new Promise((r) => setTimeout(r, 1500));
    const late = await install(two, "dev2", short);
    expect(late.code).not.toBe(0);
    expect(late.stderr).toMatch(/unknown bearer token/);
    const fresh = await install(two, "dev2", await enrolmentCode(two, "dev2"));
    expect(fresh.code, fresh.stderr).toBe(0);
  });

  it("Two developers' agents on one file collide", async () => {
    const [one, two] = machines as [Machine, Machine];
    for (const [m, harness, id] of [
      [one, "dev1", "alice-1"],
      [two, "dev2", "bob-1"],
    ] as const) {
      expect((await hook(m, harness, "SessionStart", events(m, id).SessionStart)).code).toBe(0);
      const ran = await hook(m, harness, "PostToolUse", edit(m, id, "src/a.ts", 1));
      expect(ran.code, ran.stderr).toBe(0);
    }
    await fleet.until(
      () => fires(fleet, { rule: "same-file-collision", run: "dev2#bob-1" }).length === 1,
      "the collision's fire",
      20_000,
    );
    const started = journalRows(fleet, { kind: "graph_event", type: "collision_started" }).map(
      (r) => r.event,
    );
    expect(started).toContainEqual(
      expect.objectContaining({
        repo: "forge.example/org/reduit",
        branch: "feature",
        path: "src/a.ts",
        harnesses: ["dev1", "dev2"],
        runs: ["dev1#alice-1", "dev2#bob-1"],
      }),
    );
    // Each laptop's clone lives at its own path: the rows carry repo-relative paths, never the laptop's.
    for (const id of ["alice-1", "bob-1"]) {
      const tool = rowsOf(fleet, id).find((r) => r.type === "tool");
      expect(tool?.event.paths).toEqual(["src/a.ts"]);
    }
  });

  it("A harness held by the server denies new sessions on every machine", async () => {
    const [one, two] = machines as [Machine, Machine];
    for (const m of [one, two]) {
      const r = await install(m, "team", await enrolmentCode(m, "team"));
      expect(r.code, r.stderr).toBe(0);
    }
    // A session on the first laptop tries a force push: the enforced rule holds harness team.
    const pusher = events(one, "team-push");
    expect((await hook(one, "team", "SessionStart", pusher.SessionStart)).code).toBe(0);
    await hook(one, "team", "PreToolUse", {
      ...pusher.PreToolUse,
      tool_name: "Bash",
      tool_input: { command: "git push --force origin main" },
      tool_use_id: "toolu_push",
    });
    await fleet.until(() => holds(fleet, { inForce: true }).length === 1, "the hold", 20_000);
    // A new session on either laptop is refused its first tool call, told how the hold is cleared.
    for (const [m, id] of [
      [one, "team-late-1"],
      [two, "team-late-2"],
    ] as const) {
      const p = events(m, id);
      expect((await hook(m, "team", "SessionStart", p.SessionStart)).code).toBe(0);
      const answer = await hook(m, "team", "PreToolUse", p.PreToolUse);
      expect(answer.code, answer.stderr).toBe(0);
      const out = JSON.parse(answer.stdout).hookSpecificOutput;
      expect(out.permissionDecision).toBe("deny");
      expect(out.permissionDecisionReason).toContain("harness rules clear team");
    }
    const cleared = await fleet.cli(["rules", "clear", "team"]);
    expect(cleared.code, cleared.stderr).toBe(0);
    const after = events(two, "team-after");
    expect((await hook(two, "team", "SessionStart", after.SessionStart)).code).toBe(0);
    const allowed = await hook(two, "team", "PreToolUse", after.PreToolUse);
    expect(allowed).toMatchObject({ code: 0, stdout: "" });
  });

  it("The link drops, the command hook spools, the link returns, nothing is lost and order per session is kept", async () => {
    const two = machines[1] as Machine;
    const id = "bob-offline";
    expect((await hook(two, "dev2", "SessionStart", events(two, id).SessionStart)).code).toBe(0);
    two.laptop.link(false);
    try {
      for (const [n, file] of ["src/b.ts", "src/c.ts"].entries()) {
        const ran = await hook(two, "dev2", "PostToolUse", edit(two, id, file, n));
        // The agent is not stopped by a dropped link: the call is answered and waits in the spool.
        expect(ran.code).toBe(0);
        // The daemon cannot be reached; a later call may say instead that it waits behind the first.
        expect(ran.stderr).toMatch(
          /cannot be reached at https:\/\/10\.77\.0\.1:\d+.*waits in|an earlier call of its session waits in the spool/,
        );
      }
    } finally {
      two.laptop.link(true);
    }
    const ran = await hook(two, "dev2", "Stop", events(two, id).Stop);
    expect(ran.code, ran.stderr).toBe(0);
    await fleet.until(() => rowsOf(fleet, id).length === 4, "the spooled rows and the live one", 20_000);
    expect(
      rowsOf(fleet, id).map((r) => [r.type, (r.event.paths as string[] | undefined)?.[0] ?? null]),
    ).toEqual([
      ["opened", null],
      ["tool", "src/b.ts"],
      ["tool", "src/c.ts"],
      ["mark", null],
    ]);
  });
});
