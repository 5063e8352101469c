/**
 * Issue 26's heavy cases, run by `npm run soak` only (PROPERTY_RUNS_FACTOR set): over a journal of a
 * million rows, 10 count_journal scans from 5 gateway sessions all get an answer (a count, or the bound's
 * refusal) from the two query workers while GetStatus keeps answering; and the RPC socket, offered twice
 * its cap at once, refuses exactly the connections past it and counts each.
 */
import * as net from "node:net";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodePreamble, mcpSocketPath } from "../../../src/shell/gateway/protocol.js";
import { ruleClient } from "../../../src/shell/rpc/client.js";
import { MAX_SOCKET_CONNECTIONS } from "../../../src/shell/rpc/server.js";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import { openStore } from "../../../src/shell/store/open-store.js";
import { skipEvaluatorToEnd } from "../../support/store-reads.js";
import { TestFleet } from "../daemon-harness.js";
import { gatewayToken } from "./mcp-session.js";

const SOAK = process.env.PROPERTY_RUNS_FACTOR !== undefined;
const ROWS = 1_000_000;
let fleet: TestFleet;
let metricsUrl: string;

beforeAll(async () => {
  if (!SOAK) return;
  fleet = new TestFleet({ config: '[memory]\nrule_miners = ["miner"]' });
  const store = openStore(fleet.storePath, "soak");
  store.db.pragma("synchronous = OFF");
  const journal = new JournalTable(store.db);
  const t0 = Date.now() - 6 * 86_400_000;
  const step = (6 * 86_400_000) / ROWS;
  for (let from = 0; from < ROWS; from += 10_000)
    store.db.transaction(() => {
      for (let i = from; i < from + 10_000; i++) {
        const harness = `h${i % 20}`;
        journal.append({
          kind: "run_event",
          source: "observer",
          at: Math.floor(t0 + i * step),
          event: {
            type: "tool",
            harness,
            run: `${harness}#${i >> 9}`,
            tool: "Bash",
            action: "exec",
            paths: [`f${i % 200}.go`],
          },
        });
      }
    })();
  skipEvaluatorToEnd(store);
  store.close();
  metricsUrl = /metrics (http:[^\s,]+)/.exec(await fleet.start({}, 300_000))?.[1] as string;
}, 600_000);

afterAll(() => fleet?.dispose());

function session(token: string, calls: readonly Record<string, unknown>[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(mcpSocketPath(fleet.socketPath));
    const answers: string[] = [];
    let buffered = "";
    socket.on("error", reject);
    socket.on("data", (c: Buffer) => {
      buffered += c.toString("utf8");
      for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
        const line = JSON.parse(buffered.slice(0, nl)) as {
          id: number;
          result?: { content?: { text: string }[] };
        };
        buffered = buffered.slice(nl + 1);
        if (line.id === 0) {
          calls.forEach((args, i) => {
            const params = { name: "count_journal", arguments: args };
            socket.write(`${JSON.stringify({ jsonrpc: "2.0", id: i + 1, method: "tools/call", params })}\n`);
          });
          continue;
        }
        answers.push(line.result?.content?.[0]?.text ?? JSON.stringify(line));
        if (answers.length === calls.length) {
          socket.destroy();
          resolve(answers);
        }
      }
    });
    socket.write(encodePreamble(token));
    const params = {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "soak", version: "1" },
    };
    socket.write(`${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params })}\n`);
  });
}

describe.skipIf(!SOAK)("issue 26 soak: a million rows, caps filled twice over", () => {
  it("finding 5: 10 count_journal scans over 1M rows are all answered by the workers, GetStatus answering meanwhile", async () => {
    const token = await gatewayToken(fleet, "miner", "miner#1");
    const scans = Promise.all(
      Array.from({ length: 5 }, (_, s) =>
        session(token, [
          { selector: { tool: "Bash" }, within: "168h" },
          { selector: { type: "tool", harness: `h${s}` }, within: "24h" },
        ]),
      ),
    );
    let done = false;
    void scans.finally(() => {
      done = true;
    });
    // Another client's calls are answered while the scans run (their time is bench:contention's).
    const rules = ruleClient({ socketPath: fleet.socketPath });
    let statuses = 0;
    while (!done) {
      await rules.getStatus({});
      statuses++;
    }
    const answers = (await scans).flat();
    expect(answers).toHaveLength(10);
    for (const a of answers) expect(a).toMatch(/"number": \d+|more than 50,000 run_event rows/);
    expect(statuses).toBeGreaterThan(0);
  }, 300_000);

  it(`finding 7: offered ${2 * MAX_SOCKET_CONNECTIONS} connections at once, the RPC socket keeps at most ${MAX_SOCKET_CONNECTIONS} and counts each it refuses`, async () => {
    const sockets = await Promise.all(
      Array.from(
        { length: 2 * MAX_SOCKET_CONNECTIONS },
        () =>
          new Promise<net.Socket>((resolve, reject) => {
            const s = net.connect(path.resolve(fleet.socketPath));
            s.once("connect", () => resolve(s));
            s.once("error", reject);
          }),
      ),
    );
    // The GetStatus client above may still hold a keep-alive connection: it counts against the cap too.
    const closed = () => sockets.filter((s) => s.readyState === "closed" || s.destroyed).length;
    let refused: number;
    try {
      await fleet.until(() => closed() >= MAX_SOCKET_CONNECTIONS, "the refusals", 30_000);
      refused = closed();
      expect(2 * MAX_SOCKET_CONNECTIONS - refused).toBeLessThanOrEqual(MAX_SOCKET_CONNECTIONS);
    } finally {
      for (const s of sockets) s.destroy();
    }
    const text = await (await fetch(metricsUrl)).text();
    expect(text).toContain(`harness_connections_refused_total{listener="socket"} ${refused}`);
  }, 120_000);
});
