/**
 * Merging our hook entries into an agent's settings text and taking them out (issue 17, section 3):
 * install then uninstall on a settings file with other hooks and keys leaves it byte-identical, in the
 * file's own formatting; a second install changes nothing; ours in another form is replaced; a file that
 * is not JSON, or not the shape the agents read, is refused with where.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AgentAdapter } from "../../../../src/shell/agents/adapters/adapter.js";
import { AGENTS } from "../../../../src/shell/agents/adapters/registry.js";
import {
  type HookTarget,
  hookEntries,
  isOurHandler,
} from "../../../../src/shell/agents/install/hook-entries.js";
import { JsonSyntaxError, parseJsonText } from "../../../../src/shell/agents/install/json-text.js";
import {
  mergeEntries,
  removeEntries,
  SettingsShapeError,
} from "../../../../src/shell/agents/install/settings-merge.js";
import { runs } from "../../../property-runs.js";

const agent = (name: string): AgentAdapter => AGENTS.agent(name) as AgentAdapter;
const events = (name: string): string[] => Object.keys(agent(name).install.events);

const commandTarget = (name: string, harness = "impl"): HookTarget => ({
  agent: agent(name),
  harness,
  hook: {
    mode: "command",
    launcher: ["/usr/bin/node", "/opt/harness rules/dist/shell/cli/main.js"],
    tokenFiles: {
      observer: `/home/op/.local/state/harness/agents/${harness}/observer.token`,
      ledger: `/home/op/.local/state/harness/agents/${harness}/ledger.token`,
    },
    socket: "/run/user/1000/harness.sock",
  },
});

const httpTarget = (harness = "impl"): HookTarget => ({
  agent: agent("claude-code"),
  harness,
  hook: {
    mode: "http",
    listen: "127.0.0.1:7434",
    tokens: { observer: "o".repeat(43), ledger: "l".repeat(43) },
  },
});

const install = (text: string | undefined, target: HookTarget) =>
  mergeEntries(text, hookEntries(target), (h) => isOurHandler(h, target.agent, target.harness));
const uninstall = (text: string, target: HookTarget, created: readonly string[] | undefined) =>
  removeEntries(text, (h) => isOurHandler(h, target.agent, target.harness), created);

/** A Claude Code project file with hooks of its own, other keys, and a trailing newline, 2-space indented. */
const EXISTING = `${JSON.stringify(
  {
    permissions: { allow: ["Bash(npm test)"], deny: [] },
    hooks: {
      PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./lint-bash.sh", timeout: 5 }] }],
      Notification: [{ hooks: [{ type: "command", command: "notify-send done" }] }],
    },
    model: "opus",
  },
  null,
  2,
)}\n`;

describe("settings merge", () => {
  it("install then uninstall on a settings file with other hooks leaves it byte-identical", () => {
    const target = commandTarget("claude-code");
    const installed = install(EXISTING, target);
    expect(installed.changed).toBe(true);
    const value = JSON.parse(installed.text) as { hooks: Record<string, { hooks: { command: string }[] }[]> };
    expect(Object.keys(value.hooks).sort()).toEqual([...events("claude-code"), "Notification"].sort());
    // The operator's own PreToolUse group comes first, untouched; ours follows it.
    expect(value.hooks.PreToolUse?.map((g) => g.hooks[0]?.command)).toEqual([
      "./lint-bash.sh",
      "/usr/bin/node '/opt/harness rules/dist/shell/cli/main.js' hook claude-code --harness impl --observer-token /home/op/.local/state/harness/agents/impl/observer.token --ledger-token /home/op/.local/state/harness/agents/impl/ledger.token --socket /run/user/1000/harness.sock",
    ]);
    // Written in the file's style: what JSON.stringify(…, null, 2) would write for the merged value.
    expect(installed.text).toBe(`${JSON.stringify(value, null, 2)}\n`);
    const removed = uninstall(installed.text, target, installed.created);
    expect(removed.removed).toBe(events("claude-code").length);
    expect(removed.text).toBe(EXISTING);
  });

  it("a second install changes nothing", () => {
    for (const target of [commandTarget("claude-code"), commandTarget("codex"), httpTarget()]) {
      const first = install(EXISTING, target);
      const second = install(first.text, target);
      expect(second).toEqual({ text: first.text, changed: false, created: [] });
    }
  });

  it("creates the file's content from nothing, and uninstall with the record empties it", () => {
    const target = commandTarget("codex");
    const created = install(undefined, target);
    expect(created.changed).toBe(true);
    expect(created.created).toEqual(["hooks", ...events("codex").map((e) => `hooks.${e}`)]);
    expect(Object.keys((JSON.parse(created.text) as { hooks: object }).hooks)).toEqual([
      "SessionStart",
      "SessionEnd",
      "UserPromptSubmit",
      "PreToolUse",
      "PostToolUse",
      "Stop",
    ]);
    expect(uninstall(created.text, target, created.created).text).toBe("{}\n");
  });

  it("replaces ours when the mode changes, and leaves other harnesses' entries alone", () => {
    const other = install(EXISTING, commandTarget("claude-code", "nightly")).text;
    const asCommand = install(other, commandTarget("claude-code"));
    const asHttp = install(asCommand.text, httpTarget());
    const hooks = (JSON.parse(asHttp.text) as { hooks: Record<string, { hooks: { type: string }[] }[]> })
      .hooks;
    expect(hooks.PreToolUse?.map((g) => g.hooks[0]?.type)).toEqual(["command", "command", "http"]);
    expect(uninstall(asHttp.text, httpTarget(), asCommand.created).text).toBe(other);
  });

  it("writes the http entries the seam names", () => {
    const [entry] = hookEntries(httpTarget("team a"));
    expect(entry).toEqual({
      event: "SessionStart",
      group: {
        hooks: [
          {
            type: "http",
            url: "http://127.0.0.1:7434/hooks/claude-code?harness=team%20a",
            headers: { Authorization: `Bearer ${"o".repeat(43)}`, "X-Harness-Ledger-Token": "l".repeat(43) },
            timeout: 5,
          },
        ],
      },
    });
  });

  it("removes our handler from a group the operator added a handler of their own to, and keeps theirs", () => {
    const target = commandTarget("codex");
    const installed = JSON.parse(install(undefined, target).text) as {
      hooks: Record<string, { hooks: unknown[] }[]>;
    };
    installed.hooks.Stop?.[0]?.hooks.push({ type: "command", command: "say done" });
    const text = JSON.stringify(installed, null, 4);
    const r = uninstall(text, target, undefined);
    expect(JSON.parse(r.text)).toEqual({
      hooks: { Stop: [{ hooks: [{ type: "command", command: "say done" }] }] },
    });
  });

  it("recognises only our words: another tool's `hook` command is not ours", () => {
    const ours = (command: string) =>
      isOurHandler({ type: "command", command }, agent("claude-code"), "impl");
    expect(ours("x hook claude-code --harness impl --observer-token a --ledger-token b --socket s")).toBe(
      true,
    );
    expect(ours("x hook claude-code --harness impl2 --observer-token a --ledger-token b --socket s")).toBe(
      false,
    );
    expect(
      ours("x hook claude-code --harness impl --observer-token a --ledger-token b --socket s; rm -rf ~"),
    ).toBe(false);
    expect(ours("other hook codex --harness impl --observer-token a --ledger-token b --socket s")).toBe(
      false,
    );
    const http = (url: string) => isOurHandler({ type: "http", url }, agent("claude-code"), "impl");
    expect(http("http://127.0.0.1:9/hooks/claude-code?harness=impl")).toBe(true);
    expect(http("http://127.0.0.1:9/hooks/claude-code?harness=impl&x=1")).toBe(false);
    expect(http("https://example.com/hooks")).toBe(false);
  });

  it("refuses a file that is not JSON with where, and one of another shape with what", () => {
    const at = (text: string) => {
      try {
        parseJsonText(text);
      } catch (e) {
        return e instanceof JsonSyntaxError ? [e.offset, e.message] : e;
      }
      return undefined;
    };
    expect(at('{"a": 1,}')).toEqual([8, 'expected a key in double quotes ("…"), found "}"']);
    expect(at('{"a": 1} // note')).toEqual([9, 'expected the end of the file after the value, found "/"']);
    expect(at('{"a": "x\ny"}')).toEqual([8, 'expected a control character to be escaped, found "\\n"']);
    expect(at("[1, 2")).toEqual([5, 'expected "," or "]", found the end of the file']);
    expect(() => install('{"hooks": []}', commandTarget("codex"))).toThrow(SettingsShapeError);
    expect(() => install('{"hooks": {"Stop": {}}}', commandTarget("codex"))).toThrow(
      '"hooks.Stop" must be an array of matcher groups',
    );
    expect(() => install("[]", commandTarget("codex"))).toThrow("the settings must be a JSON object");
  });
});

// Generated settings: other keys, and hooks of the operator's own under our events and others, some empty.
const scalar = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null));
const otherValue = fc.oneof(
  scalar,
  fc.array(scalar, { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 6 }), scalar, { maxKeys: 3 }),
);
const handler = fc.record({
  type: fc.constant("command"),
  command: fc.oneof(
    fc.string({ maxLength: 20 }),
    fc.constant("node x.js hook claude-code --harness other --observer-token a --ledger-token b --socket s"),
  ),
  timeout: fc.integer({ min: 1, max: 600 }),
});
const group = fc.record(
  { matcher: fc.constantFrom("Bash", "Edit|Write", ""), hooks: fc.array(handler, { maxLength: 2 }) },
  { requiredKeys: ["hooks"] },
);
const eventName = fc.constantFrom(
  "PreToolUse",
  "PostToolUse",
  "Stop",
  "SessionStart",
  "Notification",
  "Mine",
);
const settings = fc.record(
  {
    hooks: fc.dictionary(eventName, fc.array(group, { maxLength: 3 }), { maxKeys: 4 }),
    other: fc.dictionary(
      fc.string({ maxLength: 8 }).filter((k) => k !== "hooks"),
      otherValue,
      { maxKeys: 4 },
    ),
  },
  { requiredKeys: ["other"] },
);
const style = fc.record({
  indent: fc.constantFrom(0, 2, 4, "\t"),
  crlf: fc.boolean(),
  trailingNewline: fc.boolean(),
});

describe("settings merge, over generated settings", () => {
  // About 6 ms a case on a loaded machine: the soak's 50 times the cases need minutes, not 60 s.
  it(
    "install then uninstall gives back the same bytes, and a second install changes nothing",
    () => {
      fc.assert(
        fc.property(
          settings,
          style,
          fc.constantFrom<HookTarget>(commandTarget("claude-code"), commandTarget("codex"), httpTarget()),
          (s, st, target) => {
            const value = s.hooks === undefined ? s.other : { ...s.other, hooks: s.hooks };
            let text = JSON.stringify(value, null, st.indent === 0 ? undefined : st.indent);
            if (st.indent !== 0 && st.crlf) text = text.replaceAll("\n", "\r\n");
            if (st.trailingNewline) text += st.crlf && st.indent !== 0 ? "\r\n" : "\n";
            const installed = install(text, target);
            const merged = JSON.parse(installed.text) as { hooks: Record<string, unknown[]> };
            for (const { event, group } of hookEntries(target))
              expect(merged.hooks[event]?.at(-1)).toEqual(group);
            expect(install(installed.text, target).changed).toBe(false);
            expect(uninstall(installed.text, target, installed.created).text).toBe(text);
          },
        ),
        { numRuns: runs(300) },
      );
    },
    Math.max(60_000, runs(300) * 10),
  );
});
