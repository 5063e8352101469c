/**
 * The command hook's fast paths (docs/decisions/0013-command-hook-fast-path.md) against a real daemon:
 * the native client (`hook-client.c`, compiled as install compiles it) and the POSIX sh and curl script
 * (`harness-hook.sh`), under dash (Debian's /bin/sh) and bash in POSIX mode (macOS's /bin/sh). The
 * `node` they hand a call to is a wrapper that notes each start (its arguments and environment) before
 * it runs the real Node, and `curl` on PATH a wrapper that notes its own, so a test sees which calls
 * started Node and what each command line held.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Spool } from "../../../../src/shell/agents/forwarder/spool.js";
import { buildHookClient } from "../../../../src/shell/agents/install/hook-client.js";
import { type CliResult, runProcess, TestFleet } from "../../daemon-harness.js";
import { BIN, makeRepo, rowsOf } from "../hook-harness.js";
import { claudeCode } from "../payloads.js";

const SCRIPT = fileURLToPath(
  new URL("../../../../dist/shell/agents/forwarder/harness-hook.sh", import.meta.url),
);
const SOURCE = fileURLToPath(
  new URL("../../../../dist/shell/agents/forwarder/hook-client.c", import.meta.url),
);

type Client = readonly [string, ...string[]];
const clients = (): readonly (readonly [string, Client])[] => [
  ["native", [native]],
  ["dash", ["/bin/sh", SCRIPT]],
  ["bash --posix", ["bash", "--posix", SCRIPT]],
];
const CLIENT_NAMES = ["native", "dash", "bash --posix"] as const;
const client = (name: string): Client => clients().find(([n]) => n === name)?.[1] as Client;

let repo: string;
let fleet: TestFleet;
/** The compiled client. */
let native: string;
let wrappers: string;
/** Each Node start's arguments, one line each. */
let nodeStarts: string;
/** Each curl start's arguments and environment. */
let curlStarts: string;

function writeWrapper(file: string, log: string, real: string): void {
  fs.writeFileSync(
    file,
    `#!/bin/sh\n{ printf '%s ' "$@"; echo; env; echo ---; } >> ${JSON.stringify(log)}\nexec ${JSON.stringify(real)} "$@"\n`,
    { mode: 0o755 },
  );
}

const realCurl = (): string => {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    const f = path.join(dir, "curl");
    if (fs.existsSync(f)) return f;
  }
  throw new Error("curl is not on PATH: the command hook's fast path needs it");
};

const starts = (log: string): number =>
  fs.existsSync(log) ? fs.readFileSync(log, "utf8").split("---\n").length - 1 : 0;

/** One hook call through a fast path, as install writes it. */
function viaScript(
  via: Client,
  payload: string,
  extra: readonly string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<CliResult> {
  const [program, ...words] = via;
  return runProcess(
    program,
    [
      ...words,
      path.join(wrappers, "node"),
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
      ...extra,
    ],
    { env: { ...fleet.env, PATH: `${wrappers}:${fleet.env.PATH}`, ...env }, stdin: payload },
  );
}

/** The same call through the Node forwarder alone, as install wrote it before the fast path. */
function viaNode(payload: string): Promise<CliResult> {
  return runProcess(
    process.execPath,
    [
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
    ],
    { env: fleet.env, stdin: payload },
  );
}

/** A row as the two paths may differ in it: the session (each path its own), the seq and the time. */
const comparable = (row: { event: Record<string, unknown> }) => {
  const { session: _s, run: _r, at: _a, ...rest } = row.event;
  return rest;
};

beforeAll(async () => {
  repo = makeRepo();
  fleet = new TestFleet({ config: '[agents]\nlisten = ""' });
  wrappers = path.join(fleet.root, "wrappers");
  fs.mkdirSync(wrappers);
  nodeStarts = path.join(fleet.root, "node-starts");
  curlStarts = path.join(fleet.root, "curl-starts");
  writeWrapper(path.join(wrappers, "node"), nodeStarts, process.execPath);
  writeWrapper(path.join(wrappers, "curl"), curlStarts, realCurl());
  const built = buildHookClient(fleet.env, SOURCE, false);
  if (!("path" in built)) throw new Error(`the native client does not build: ${built.problem}`);
  native = built.path;
  await fleet.start();
}, 30_000);

afterAll(async () => {
  await fleet.dispose();
  fs.rmSync(repo, { recursive: true, force: true });
});

describe("The command hook without a Node start", () => {
  for (const name of CLIENT_NAMES)
    it(`answers as the forwarder does, and starts no Node while the daemon answers (${name})`, async () => {
      const via = client(name);
      const session = `fast-${name.split(" ")[0]}`;
      const fast = claudeCode(repo, session);
      const slow = claudeCode(repo, `${session}-node`);
      const nodeBefore = starts(nodeStarts);
      const curlBefore = starts(curlStarts);
      for (const event of [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
      ] as const) {
        const a = await viaScript(via, JSON.stringify(fast[event]));
        const b = await viaNode(JSON.stringify(slow[event]));
        expect(a, event).toEqual(b);
      }
      expect(starts(nodeStarts) - nodeBefore).toBe(0);
      expect(starts(curlStarts) - curlBefore).toBe(name === "native" ? 0 : 5);
      const rows = rowsOf(fleet, session);
      expect(rows.map(comparable)).toEqual(rowsOf(fleet, `${session}-node`).map(comparable));
      expect(rows.map((r) => r.event.type)).toEqual(["opened", "mark", "tool", "mark"]);
    });

  for (const name of ["native", "dash"] as const)
    it(`a waiting spool, a token file the forwarder would refuse, or an oversized payload: the forwarder takes the call (${name})`, async () => {
      const via = client(name);
      const spool = new Spool(path.join(fleet.root, "state", "harness", "agents", "spool"));
      const session = `handover-${name}`;
      const p = claudeCode(repo, session);
      // The daemon is up, but a call waits: the forwarder delivers it before this one.
      spool.add({
        v: 1,
        adapter: "claude-code",
        harness: "impl",
        observer_token_file: fleet.tokens.get("observer") as string,
        ledger_token_file: fleet.tokens.get("ledger") as string,
        at: Date.now(),
        key: `hook:call:waiting-${name}`,
        payload: p.SessionStart,
      });
      let before = starts(nodeStarts);
      const r = await viaScript(via, JSON.stringify(p.UserPromptSubmit));
      expect(r).toMatchObject({ code: 0, stdout: "" });
      expect(starts(nodeStarts) - before).toBe(1);
      expect(spool.entries()).toEqual([]);
      expect(rowsOf(fleet, session).map((row) => row.event.type)).toEqual(["opened", "mark"]);

      // A token file others may read: the forwarder's own refusal, word for word.
      const loose = path.join(fleet.root, "loose.token");
      fs.copyFileSync(fleet.tokens.get("observer") as string, loose);
      fs.chmodSync(loose, 0o644);
      before = starts(nodeStarts);
      const [program, ...words] = via;
      const refused = await runProcess(
        program,
        [
          ...words,
          path.join(wrappers, "node"),
          BIN,
          "hook",
          "claude-code",
          "--harness",
          "impl",
          "--observer-token",
          loose,
          "--ledger-token",
          fleet.tokens.get("ledger") as string,
          "--socket",
          fleet.socketPath,
        ],
        { env: { ...fleet.env, PATH: `${wrappers}:${fleet.env.PATH}` }, stdin: JSON.stringify(p.Stop) },
      );
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(
        `harness hook: ${loose} is readable by group or others; run chmod 600 ${loose}; not recorded, the tool runs\n`,
      );
      expect(starts(nodeStarts) - before).toBe(1);

      // One byte past the payload bound: the forwarder's words again, and nothing recorded.
      before = starts(nodeStarts);
      const big = await viaScript(via, `{"x":"${"a".repeat(8 * 1024 * 1024)}"}`);
      expect(big.code).toBe(1);
      expect(big.stderr).toMatch(/payload is larger than 8388608 bytes; not recorded, the tool runs/);
      expect(starts(nodeStarts) - before).toBe(1);
    });

  for (const name of ["native", "dash"] as const)
    it(`a call the daemon answers too late is admitted once: the forwarder that takes it over sends the same key (${name})`, async () => {
      const via = client(name);
      const session = `late-${name}`;
      const p = claudeCode(repo, session);
      // SessionStart names no call: its key is made from the fast path's nonce (hook-key.ts). The daemon
      // is stopped (it accepts and never answers): the fast path gives up after half the time, the forwarder after
      // the rest and spools the call; the daemon, continued, reads both requests, then the spool delivers
      // it a third time. Three deliveries, one key, one row.
      const before = starts(nodeStarts);
      fleet.signal("SIGSTOP");
      let r: CliResult;
      try {
        r = await viaScript(via, JSON.stringify(p.SessionStart), ["--timeout", "600"]);
      } finally {
        fleet.signal("SIGCONT");
      }
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/the call waits in .*spool/);
      expect(starts(nodeStarts) - before).toBe(1);
      const handedOver = fs.readFileSync(nodeStarts, "utf8").split("---\n").at(-2) as string;
      expect(handedOver).toMatch(/--call [0-9a-f-]{16,64} --timeout 300 /);
      // The next call delivers the spooled one first.
      expect((await viaScript(via, JSON.stringify(p.UserPromptSubmit))).code).toBe(0);
      await fleet.until(() => rowsOf(fleet, session).length >= 2, "the late session's rows");
      // Let the daemon finish whatever the stopped requests left it.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(rowsOf(fleet, session).map((row) => row.event.type)).toEqual(["opened", "mark"]);
    });
  it("no token was ever on a command line or in an environment: curl reads them from a descriptor", () => {
    const tokens = (["observer", "ledger"] as const).map((s) =>
      fs.readFileSync(fleet.tokens.get(s) as string, "utf8").trim(),
    );
    const curl = fs.readFileSync(curlStarts, "utf8");
    const node = fs.readFileSync(nodeStarts, "utf8");
    expect(curl).toContain("--config /dev/fd/3");
    // The calls above that the forwarder took, with and without the call's nonce.
    expect(node).toContain(" --call ");
    for (const token of tokens) {
      expect(curl).not.toContain(token);
      expect(node).not.toContain(token);
    }
  });
});
