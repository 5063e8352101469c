/**
 * A third agent, defined here and nowhere in src/: "pilot", whose hooks send `{"sid", "kind", …}` and
 * read `{"refuse": reason}` back. It maps `start` to an opened row, `tool` to a tool row, and `ask`
 * (before a tool runs) to nothing but the verdict; its settings are `.pilot/hooks.json`. Only the
 * adapter registry's record shape is used, so a test that runs it shows an agent joins through the
 * registry alone.
 */
import { join, resolve } from "node:path";
import type { AgentAdapter } from "../../../src/shell/agents/adapters/adapter.js";
import type { Mapped, Payload } from "../../../src/shell/agents/ingest/hook-event.js";
import type { HookFormat } from "../../../src/shell/agents/ingest/hook-format.js";

const text = (p: Payload, key: string): string | undefined => {
  const v = p[key];
  return typeof v === "string" && v !== "" ? v : undefined;
};

function mapPilot(p: Payload): Mapped {
  const session = text(p, "sid");
  const event = text(p, "kind");
  if (session === undefined || event === undefined) return { ok: false, problem: "no sid or kind" };
  const cwd = text(p, "cwd");
  const base = { event, session, ...(cwd === undefined ? {} : { cwd }) };
  switch (event) {
    case "start":
      return { ok: true, hook: { ...base, row: { source: "ledger", type: "opened", trigger: "pilot" } } };
    case "tool": {
      const tool = text(p, "tool") ?? "unknown";
      return {
        ok: true,
        hook: {
          ...base,
          row: {
            source: "observer",
            type: "tool",
            tool,
            action: "exec",
            isError: p.failed === true,
            paths: [],
          },
        },
      };
    }
    case "ask":
      return { ok: true, hook: base };
    default:
      return { ok: true, hook: { ...base, unknown: true } };
  }
}

const hook: HookFormat = {
  name: "pilot",
  agent: "pilot",
  ids: { session: "sid", event: "kind", calls: [{ key: "call", prefix: "call:" }] },
  payloadFrom: "stdin",
  gate: (event) => (event === "ask" ? "tool" : "turn"),
  map: mapPilot,
  answer: (_gate, refusal) => (refusal === undefined ? "" : JSON.stringify({ refuse: refusal.reason })),
};

export const pilot: AgentAdapter = {
  name: "pilot",
  title: "Pilot",
  hooks: [hook],
  install: {
    events: { start: 5, ask: 5, tool: 5 },
    modes: ["command"],
    settingsFile: (scope, env, cwd) =>
      scope.kind === "project"
        ? join(resolve(cwd, scope.dir), ".pilot", "hooks.json")
        : join(env.HOME ?? "/nonexistent", ".pilot", "hooks.json"),
    settingsShape: "hooks-by-event",
    notes: [],
  },
};
