/**
 * `harness rules backtest` and `RuleService.Backtest` (SPEC-0029 REQ-8, REQ-17) against a real daemon:
 * a month of fleet imported and evaluated live, then each starter rule backtested over it.
 */
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STARTER_FILES } from "../../../src/core/starter-pack.generated.js";
import { ruleClient } from "../../../src/shell/rpc/client.js";
import { ErrorDetailSchema, ErrorReason } from "../../../src/shell/rpc/gen/harness/v1/rules_pb.js";
import { fires } from "../../support/store-reads.js";
import { TestFleet } from "../daemon-harness.js";
import { evaluateMonthLive } from "../fleet-month.js";

interface BacktestJson {
  rule: string;
  since: string;
  rows: number;
  evaluations: number;
  eval_errors: number;
  store_errors: number;
  ran_on: string;
  fires: {
    seq: number;
    at: string;
    target: { kind: string; key: string } | null;
    level: string;
    mode: string;
  }[];
}

const starterText = (name: string): string => {
  const file = STARTER_FILES.find(([f]) => f === `starter-rules/${name}.toml`);
  if (file === undefined) throw new Error(`no starter rule ${name}`);
  return file[1];
};
const DAY_MS = 86_400_000;
const STARTER_NAMES = STARTER_FILES.map(([f]) => path.basename(f, ".toml"));

/**
 * A Backtest over a raw socket that reads until its start part has arrived, then stops reading for
 * good (the socket paused, so the kernel's buffers fill): a client that stalls, not one whose library
 * reads ahead into memory.
 */
function stalledBacktest(socketPath: string, text: string): Promise<net.Socket> {
  const json = Buffer.from(JSON.stringify({ file: "rules/noisy.toml", text, sinceMs: String(30 * DAY_MS) }));
  const envelope = Buffer.alloc(5 + json.length);
  envelope.writeUInt32BE(json.length, 1);
  json.copy(envelope, 5);
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let seen = "";
    socket.on("error", reject);
    socket.on("connect", () => {
      socket.write(
        "POST /harness.v1.RuleService/Backtest HTTP/1.1\r\nHost: localhost\r\n" +
          `Content-Type: application/connect+json\r\nContent-Length: ${envelope.length}\r\n\r\n`,
      );
      socket.write(envelope);
    });
    socket.on("data", (d: Buffer) => {
      seen += d.toString("latin1");
      if (!seen.includes('"start"')) return;
      socket.pause();
      socket.removeAllListeners("data");
      resolve(socket);
    });
  });
}

describe("harness rules backtest over a month of fleet", () => {
  const fleet = new TestFleet();
  const rulesDir = path.join(fleet.root, "checkout", "rules");

  const ruleFile = (name: string, text: string): string => {
    const file = path.join(rulesDir, `${name}.toml`);
    fs.writeFileSync(file, text);
    return file;
  };
  const backtest = async (file: string, ...args: string[]) => {
    const r = await fleet.cli(["rules", "backtest", file, ...args]);
    return { ...r, json: () => JSON.parse(r.stdout) as BacktestJson };
  };

  beforeAll(async () => {
    fs.mkdirSync(rulesDir, { recursive: true });
    await evaluateMonthLive(fleet);
  }, 180_000);

  afterAll(() => fleet.dispose());

  it("Backtest reproduces live fires", async () => {
    for (const name of STARTER_NAMES) {
      const result = await backtest(ruleFile(name, starterText(name)), "--since", "30d", "--json");
      expect(result.code, result.stderr).toBe(0);
      const replayed = result.json();
      expect(replayed.ran_on).toBe("daemon");
      const live = fires(fleet, { rule: name });
      // Not a vacuous month: every starter rule fired live.
      expect(live.length, `${name} fired live`).toBeGreaterThan(0);
      expect(
        replayed.fires.map((f) => [f.seq, f.target?.key ?? null]),
        name,
      ).toEqual(live.map((f) => [f.seq, f.target_key]));
      expect(replayed.store_errors).toBe(0);
    }
  }, 120_000);

  it("A silent rule says so", async () => {
    const text = starterText("same-file-collision").replace(
      'event.type == "collision_started" && event.scope == "file"',
      'event.type == "collision_started" && event.scope == "no-such-scope"',
    );
    const result = await backtest(ruleFile("same-file-collision", text), "--since", "30d");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^0 fires in 30d over \d+ rows/m);
  });

  it("prints each fire with its level, mode and target, and the counts", async () => {
    const result = await backtest(ruleFile("same-file-collision", starterText("same-file-collision")));
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines[0]).toMatch(
      /^backtest same-file-collision \([0-9a-f]{12}\) over the last 30d: rows 1\.\.\d+$/,
    );
    expect(lines[2]).toMatch(/^AT {20}SEQ +KIND\/TYPE +TARGET +LEVEL +MODE +HOLD$/);
    expect(lines[3]).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ {2}\d+ +graph_event\/collision_started {2}run \S+ +annotate {2}active {2}-$/,
    );
    expect(lines.at(-2)).toMatch(
      /^\d+ fires in 30d over \d+ rows \(0 eval_errors, 0 store_errors, \d+ suppressed by cooldown\)$/,
    );
  });

  it("refuses a rule that would not load with its reason and position, exit 1", async () => {
    const text = starterText("cross-run-churn").replace(/duration\("24h"\)\) >= 4/, 'duration("24h")) >');
    const result = await backtest(ruleFile("cross-run-churn", text));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/cross-run-churn\.toml:\d+:\d+: compile: /);
  });

  it("refuses --since beyond journal_retention minus 7d, exit 2", async () => {
    const result = await backtest(
      ruleFile("same-file-collision", starterText("same-file-collision")),
      "--since",
      "39d",
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /longer than journal_retention \(45d\) minus the 7d its windows look back: at most 38d/,
    );
  });

  it("Backtests are bounded", async () => {
    const client = ruleClient({ socketPath: fleet.socketPath });
    // A rule that fires on nearly every tool call, with a long message, streams megabytes: more than the
    // sockets between daemon and client buffer, so a caller that stops reading keeps its backtest, and
    // its slot, open.
    const noisy = `name = "noisy"
description = "every tool call"
on = "run_event"
when = 'event.type == "tool"'
level = "notify"
cooldown = "1m"
target = "run"
message = "{{run}} ${"x".repeat(250)}"
`;
    // Two callers that read their start and then stop reading: their sockets fill and the daemon's
    // writes wait, so their backtests, and both slots, stay open until they go away.
    const stalled = await Promise.all([0, 1].map(() => stalledBacktest(fleet.socketPath, noisy)));
    const third = (async () => {
      for await (const _ of client.backtest({ file: "rules/noisy.toml", text: noisy }));
    })();
    const refused = await third.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused, `the third backtest got ${String(refused)}`).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.ResourceExhausted);
    expect((refused as ConnectError).findDetails(ErrorDetailSchema)[0]?.reason).toBe(
      ErrorReason.BACKTEST_BUSY,
    );
    // Callers that stalled and then went away free their slots: a backtest after them runs to its
    // summary. The second's wait lets the daemon fill both sockets, so its writes are the ones waiting.
    await new Promise((r) => setTimeout(r, 1000));
    for (const socket of stalled) socket.destroy();
    let summary = false;
    for (let attempt = 0; attempt < 100 && !summary; attempt++) {
      try {
        for await (const m of client.backtest({ file: "rules/noisy.toml", text: noisy }))
          if (m.part.case === "summary") summary = true;
      } catch (e) {
        if ((e as ConnectError).code !== Code.ResourceExhausted) throw e;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    expect(summary).toBe(true);
  }, 60_000);

  it("replays over the store read-only when no daemon answers, with the same fires", async () => {
    const file = ruleFile("same-file-collision", starterText("same-file-collision"));
    const viaDaemon = (await backtest(file, "--json")).json();
    await fleet.stop();
    const result = await backtest(file, "--json");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/no daemon answers; replaying over .*harness\.db \(read-only\)/);
    const viaStore = result.json();
    expect(viaStore.ran_on).toBe("store");
    expect(viaStore.fires.map((f) => [f.seq, f.target?.key])).toEqual(
      viaDaemon.fires.map((f) => [f.seq, f.target?.key]),
    );
  });
});
