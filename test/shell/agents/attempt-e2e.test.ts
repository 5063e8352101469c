/**
 * Rules over the attempt, end to end: a real `harness daemon` with an enforced policy rule on
 * `attempt_event`, and each agent's PreToolUse sent as the installed hooks send it, through the command
 * hook (`harness hook`, a real process) and over http (the agent posting to the daemon's hook
 * endpoint itself). An enforced stop refuses the very call it matches and ends the run; a hold placed
 * by an attempt bites new sessions only.
 */
import * as fs from "node:fs";
import * as http from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { inputDigest } from "../../../src/shell/agents/ingest/go-json-digest.js";
import { fires, holds, journalRows } from "../../support/store-reads.js";
import { TestFleet } from "../daemon-harness.js";
import { makeRepo, runHook } from "./hook-harness.js";
import { claudeCode, codex } from "./payloads.js";

const FORCE_PUSH = { command: "git push --force origin main" };
const HARMLESS = { command: "ls src" };
const FORCE_PUSH_DIGEST = inputDigest(FORCE_PUSH) as string;

const rule = (name: string, level: string, target: string) => `name = "${name}"
description = "A force push is refused before it runs."
on = "attempt_event"
when = 'event.tool == "Bash" && event.digest == "${FORCE_PUSH_DIGEST}"'
level = "${level}"
cooldown = "1m"
target = "${target}"
message = "{{run}} tried a force push"
`;

/** Each scenario makes some twenty hook calls, each a process on the command path, and CLI calls. */
const E2E_TIMEOUT_MS = 90_000;
/** The daemon with test rules starts through tsx: slow on a busy machine. */
const START_TIMEOUT_MS = 45_000;

type Agent = "claude-code" | "codex";
type Path = "command" | "http";
const VARIANTS: readonly { agent: Agent; path: Path }[] = [
  { agent: "claude-code", path: "command" },
  { agent: "claude-code", path: "http" },
  { agent: "codex", path: "command" },
  { agent: "codex", path: "http" },
];

let repo: string;
beforeAll(() => {
  repo = makeRepo();
});
afterAll(() => fs.rmSync(repo, { recursive: true, force: true }));

/** The agent's payloads for `session`, its PreToolUse a Bash call with `input`. */
function payloads(agent: Agent, session: string) {
  const p = agent === "claude-code" ? claudeCode(repo, session) : codex(repo, session);
  let calls = 0;
  return {
    SessionStart: p.SessionStart,
    preToolUse: (input: Record<string, unknown>) => ({
      ...p.PreToolUse,
      tool_name: "Bash",
      tool_input: input,
      // Each call its own id: one id twice would be one call, admitted once.
      tool_use_id: `call_${session}_${calls++}`,
    }),
  };
}

/** Posts a payload to the daemon's hook endpoint as an agent's http hook does: the answer's body. */
async function postHook(fleet: TestFleet, agent: Agent, payload: unknown): Promise<string> {
  const [observer, ledger] = (["observer", "ledger"] as const).map((s) =>
    fs.readFileSync(fleet.tokens.get(s) as string, "utf8").trim(),
  );
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        socketPath: fleet.socketPath,
        path: `/hooks/${agent}?harness=impl`,
        method: "POST",
        headers: { authorization: `Bearer ${observer}`, "x-harness-ledger-token": ledger },
      },
      (res) => {
        let body = "";
        res.on("data", (d: Buffer) => {
          body += d.toString();
        });
        res.on("end", () =>
          res.statusCode === 200 ? resolve(body) : reject(new Error(`HTTP ${res.statusCode}: ${body}`)),
        );
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(payload));
  });
}

/** One hook call by `path`: what the agent reads back (stdout or the http body). */
async function call(fleet: TestFleet, agent: Agent, path: Path, payload: unknown): Promise<string> {
  if (path === "http") return postHook(fleet, agent, payload);
  const r = await runHook(fleet, agent, JSON.stringify(payload));
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

const decision = (answer: string) =>
  answer === "" ? undefined : (JSON.parse(answer) as Record<string, unknown>);
const denyReason = (answer: string): string | undefined => {
  const out = decision(answer)?.hookSpecificOutput as Record<string, unknown> | undefined;
  return out?.permissionDecision === "deny" ? (out.permissionDecisionReason as string) : undefined;
};

it(
  "An enforced stop rule refuses the call that matches it",
  async () => {
    const fleet = new TestFleet({
      enforce: ["force-push-stops"],
      rules: [{ name: "force-push-stops", text: rule("force-push-stops", "stop", "run") }],
      config: '[agents]\nlisten = ""',
    });
    await fleet.start({}, START_TIMEOUT_MS);
    try {
      const variants = [
        ...VARIANTS.map((v) => ({ ...v, opened: true })),
        // An http hook may never deliver the SessionStart: the attempt is then the run's first row.
        { agent: "claude-code" as const, path: "http" as const, opened: false },
      ];
      for (const [i, { agent, path, opened }] of variants.entries()) {
        const session = `stop-${i}-${agent}-${path}`;
        const run = `impl#${session}`;
        const p = payloads(agent, session);
        if (opened) await call(fleet, agent, path, p.SessionStart);
        // A call no rule matches goes on.
        expect(denyReason(await call(fleet, agent, path, p.preToolUse(HARMLESS))), session).toBeUndefined();

        const refused = await call(fleet, agent, path, p.preToolUse(FORCE_PUSH));
        const [fire] = fires(fleet, { rule: "force-push-stops", run });
        expect(fire, session).toBeDefined();
        const reason = denyReason(refused);
        expect(reason, session).toContain("rule force-push-stops");
        expect(reason).toContain(`fire ${fire?.fire_id}`);
        expect(reason).toContain("ask the operator");
        // Claude Code ends the turn beside the deny; Codex rejects `continue: false` at a tool.
        if (agent === "claude-code") expect(decision(refused)?.continue).toBe(false);
        else expect(decision(refused)?.continue).toBeUndefined();

        // The attempt is in the journal, hook-fed, with its tool row's fields known before the call.
        const attempts = journalRows(fleet, { kind: "attempt_event", run });
        expect(
          attempts.map((r) => [r.type, r.source, r.event.tool, r.event.digest, r.event.hook_fed]),
        ).toEqual([
          ["tool", "observer", "Bash", inputDigest(HARMLESS), true],
          ["tool", "observer", "Bash", FORCE_PUSH_DIGEST, true],
        ]);
        // The run is stopped: closed cancelled / rule_stop, and its next call refused too.
        const closed = journalRows(fleet, { type: "closed", run });
        expect(closed.map((r) => [r.event.outcome, r.event.reason])).toEqual([["cancelled", "rule_stop"]]);
        expect(denyReason(await call(fleet, agent, path, p.preToolUse(HARMLESS))), session).toContain(
          "force-push-stops",
        );
        // A stop holds the harness too (levels are cumulative): released for the next variant's session.
        expect((await fleet.cli(["rules", "clear", "impl"])).code).toBe(0);
      }
    } finally {
      await fleet.dispose();
    }
  },
  E2E_TIMEOUT_MS,
);

it(
  "A hold rule on an attempt holds new sessions, not this one",
  async () => {
    // Targeting the run, so each variant's fire has its own cooldown; the hold is on the run's harness.
    const fleet = new TestFleet({
      enforce: ["force-push-holds"],
      rules: [{ name: "force-push-holds", text: rule("force-push-holds", "hold", "run") }],
      config: '[agents]\nlisten = ""',
    });
    await fleet.start({}, START_TIMEOUT_MS);
    try {
      for (const { agent, path } of VARIANTS) {
        const running = payloads(agent, `running-${agent}-${path}`);
        await call(fleet, agent, path, running.SessionStart);
        // The attempt that places the hold is answered as the running session's call: it goes on.
        const placing = await call(fleet, agent, path, running.preToolUse(FORCE_PUSH));
        expect(denyReason(placing), `${agent} ${path}`).toBeUndefined();
        await fleet.until(() => holds(fleet, { harness: "impl", inForce: true }).length === 1, "the hold");
        expect(holds(fleet, { harness: "impl", inForce: true }).map((h) => h.rule)).toEqual([
          "force-push-holds",
        ]);
        expect(denyReason(await call(fleet, agent, path, running.preToolUse(HARMLESS)))).toBeUndefined();

        // A session that starts after the hold has its tool calls denied, told how the hold is cleared.
        const fresh = payloads(agent, `fresh-${agent}-${path}`);
        await call(fleet, agent, path, fresh.SessionStart);
        const held = denyReason(await call(fleet, agent, path, fresh.preToolUse(HARMLESS)));
        expect(held, `${agent} ${path}`).toContain("force-push-holds");
        expect(held).toContain("harness rules clear impl");
        expect((await fleet.cli(["rules", "clear", "impl"])).code).toBe(0);
      }
    } finally {
      await fleet.dispose();
    }
  },
  E2E_TIMEOUT_MS,
);
