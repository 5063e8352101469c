/**
 * Whatever the agent sends, the command hook's fast paths (the native client, and sh with curl) answer
 * exactly as the Node forwarder does: the same exit code, stdout and stderr, and the same rows. Payloads:
 * any text, any JSON value, and Claude Code's tool calls with any command text (quotes, backslashes,
 * control characters, astral characters). Each case sends the payload through all three to a real
 * daemon, each under a session of its own.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildHookClient } from "../../../../src/shell/agents/install/hook-client.js";
import { runs, runsTimeout } from "../../../property-runs.js";
import { runProcess, TestFleet } from "../../daemon-harness.js";
import { BIN, makeRepo, rowsOf } from "../hook-harness.js";

const FORWARDER = fileURLToPath(new URL("../../../../dist/shell/agents/forwarder/", import.meta.url));

let repo: string;
let fleet: TestFleet;
let native: string;

beforeAll(async () => {
  repo = makeRepo();
  fleet = new TestFleet({ config: '[agents]\nlisten = ""' });
  const built = buildHookClient(fleet.env, path.join(FORWARDER, "hook-client.c"), false);
  if (!("path" in built)) throw new Error(`the native client does not build: ${built.problem}`);
  native = built.path;
  await fleet.start();
}, 30_000);

afterAll(async () => {
  await fleet.dispose();
  fs.rmSync(repo, { recursive: true, force: true });
});

const hookWords = (): string[] => [
  process.execPath,
  BIN,
  "hook",
  "claude-code",
  "--harness",
  "impl",
  "--observer-token",
  fleet.tokens.get("observer") as string,
  "--ledger-token",
  fleet.tokens.get("ledger") as string,
  "--socket",
  fleet.socketPath,
];

const via = {
  native: () => [native, ...hookWords()],
  sh: () => ["/bin/sh", path.join(FORWARDER, "harness-hook.sh"), ...hookWords()],
  node: () => hookWords(),
} as const;

const run = (argv: readonly string[], stdin: string) =>
  runProcess(argv[0] as string, argv.slice(1), { env: fleet.env, stdin });

/** A payload for session `s`: its text with the session filled in. */
type Payload = (session: string) => string;

const toolCall =
  (command: string, event: "PreToolUse" | "PostToolUse"): Payload =>
  (session) =>
    JSON.stringify({
      session_id: session,
      transcript_path: "/t.jsonl",
      cwd: repo,
      permission_mode: "default",
      hook_event_name: event,
      tool_name: "Bash",
      tool_input: { command },
      tool_use_id: "toolu_1",
      ...(event === "PostToolUse" ? { tool_response: { stdout: "" }, duration_ms: 1 } : {}),
    });

const payloads: fc.Arbitrary<Payload> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 200 }).map((text) => () => text),
  fc.jsonValue({ maxDepth: 3 }).map((v) => () => JSON.stringify(v)),
  fc
    .tuple(
      fc.string({ unit: "binary", maxLength: 300 }),
      fc.constantFrom("PreToolUse", "PostToolUse" as const),
    )
    .map(([command, event]) => toolCall(command, event)),
);

let n = 0;

describe("The fast paths answer as the forwarder does", () => {
  it(
    "whatever the payload, the native client and sh with curl print, exit and record as the forwarder",
    async () => {
      await fc.assert(
        fc.asyncProperty(payloads, async (payload) => {
          n++;
          const sessions = { native: `p${n}-native`, sh: `p${n}-sh`, node: `p${n}-node` };
          const [a, b, c] = await Promise.all([
            run(via.native(), payload(sessions.native)),
            run(via.sh(), payload(sessions.sh)),
            run(via.node(), payload(sessions.node)),
          ]);
          const same = (s: string) => (t: string) => t.split(s).join("SESSION");
          expect({ ...a, stdout: same(sessions.native)(a.stdout) }).toEqual({
            ...c,
            stdout: same(sessions.node)(c.stdout),
          });
          expect({ ...b, stdout: same(sessions.sh)(b.stdout) }).toEqual({
            ...c,
            stdout: same(sessions.node)(c.stdout),
          });
          const rows = (s: string) =>
            rowsOf(fleet, s).map((r) => {
              const { session: _s, run: _r, at: _a, ...rest } = r.event;
              return rest;
            });
          expect(rows(sessions.native)).toEqual(rows(sessions.node));
          expect(rows(sessions.sh)).toEqual(rows(sessions.node));
        }),
        { numRuns: runs(15) },
      );
    },
    runsTimeout(60_000),
  );
});
