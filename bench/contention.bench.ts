/**
 * `npm run bench:contention` (issue 26): another client's GetStatus while the daemon is loaded. Over a
 * journal of ROWS rows (default 1,000,000) spread over the last six days, a daemon process answers GetStatus
 * calls back to back, first idle, then while 10 count_journal scans (5 gateway sessions, 2 each; half a
 * selector the store refuses past 50,000 rows, half one harness's tool rows, about 42,000 read) and 100
 * hook calls with distinct cwds run. Printed: GetStatus p50, p99 and max in both phases, and the loaded
 * p99 as a ratio to the idle p99 (issue 26's goal: at most 5×).
 *
 * The store is built with raw inserts (not measured) and the evaluator's cursor set to its last row, so
 * the daemon starts without catching up. Env: ROWS, IDLE_CALLS (default 200), HOOK_CALLS (default 100;
 * 0 shows the scans' share alone), BASELINE (a commit, e.g.
 * e4eabc5: its build, made by `baseline-build.ts`, is run the same way first).
 */
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { openStore } from "../src/shell/store/open-store.js";
import { INDEXED_COLUMNS } from "../src/shell/store/schema.js";
import { buildCommit, CANDIDATE_DIR } from "./baseline-build.js";
import { type BenchRow, journalRows } from "./journal-rows.js";

const ROWS = Number(process.env.ROWS ?? 1_000_000);
const IDLE_CALLS = Number(process.env.IDLE_CALLS ?? 200);
const SESSIONS = 5;
const SCANS_PER_SESSION = 2;
const HOOK_CALLS = Number(process.env.HOOK_CALLS ?? 100);
const DAY = 86_400_000;

const cliOf = (buildDir: string) => path.join(buildDir, ".bench-build", "src", "shell", "cli", "main.js");

/** The journal, written once and copied for each daemon: raw batched inserts, no fsync. */
function buildStore(file: string): void {
  const store = openStore(file, "contention bench");
  try {
    store.db.pragma("synchronous = OFF");
    const cols = ["kind", "type", "at", "source", ...INDEXED_COLUMNS, "event"];
    const insertRow = store.db.prepare(
      `INSERT INTO rule_journal (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`,
    );
    const insertPath = store.db.prepare("INSERT INTO rule_journal_paths (seq, ord, path) VALUES (?, ?, ?)");
    const insert = store.db.transaction((rows: readonly BenchRow[]) => {
      for (const { kind, source, at, event } of rows) {
        const values: unknown[] = [kind, event.type, at, source];
        for (const c of INDEXED_COLUMNS) {
          const v = event[c];
          values.push(typeof v === "string" ? v : typeof v === "boolean" ? Number(v) : null);
        }
        values.push(JSON.stringify(event));
        const seq = insertRow.run(values).lastInsertRowid;
        const paths = Array.isArray(event.paths) ? event.paths : [];
        paths.forEach((p, ord) => {
          insertPath.run(seq, ord, p);
        });
      }
    });
    let batch: BenchRow[] = [];
    for (const row of journalRows(ROWS, ROWS / 6, Date.now() - 6 * DAY)) {
      batch.push(row);
      if (batch.length === 10_000) {
        insert(batch);
        batch = [];
      }
    }
    insert(batch);
    store.db.prepare("UPDATE evaluator SET cursor = (SELECT max(seq) FROM rule_journal) WHERE id = 1").run();
  } finally {
    store.close();
  }
}

interface Daemon {
  readonly dir: string;
  readonly socket: string;
  readonly observer: string;
  readonly gatewayToken: string;
  stop(): Promise<void>;
}

async function startDaemon(cli: string, store: string): Promise<Daemon> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-contention-"));
  const sub = (name: string) => {
    const d = path.join(dir, name);
    fs.mkdirSync(d, { recursive: true, mode: 0o700 });
    return d;
  };
  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    XDG_CONFIG_HOME: sub("config"),
    XDG_STATE_HOME: sub("state"),
    XDG_RUNTIME_DIR: sub("run"),
  };
  fs.copyFileSync(store, path.join(sub("state/harness"), "harness.db"));
  const observer = randomBytes(32).toString("base64url");
  const tokenFile = path.join(dir, "observer.token");
  fs.writeFileSync(tokenFile, `${observer}\n`, { mode: 0o600 });
  fs.writeFileSync(
    path.join(sub("config/harness"), "harness.toml"),
    [
      "[memory]",
      'rule_miners = ["bench"]',
      "[server]",
      'metrics_listen = ""',
      "[server.producers]",
      `observer = ${JSON.stringify(tokenFile)}`,
      "[agents]",
      'listen = ""',
    ].join("\n"),
  );
  const child = spawn(process.execPath, [cli, "daemon"], { env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  await new Promise<void>((resolve, reject) => {
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      if (/harness daemon: store /.test(stderr)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`daemon exited ${code}: ${stderr}`)));
  });
  const minted = execFileSync(
    process.execPath,
    [cli, "token", "create", "--gateway", "--harness", "bench", "--run", "bench#1", "--json"],
    { env, encoding: "utf8" },
  );
  return {
    dir,
    socket: path.join(dir, "run", "harness.sock"),
    observer,
    gatewayToken: (JSON.parse(minted) as { token: string }).token,
    stop: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One HTTP/1.1 POST over the socket; resolves with the status once the answer has been read. */
function post(socket: string, url: string, headers: http.OutgoingHttpHeaders, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { socketPath: socket, path: url, method: "POST", headers, agent: false },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** GetStatus over Connect's JSON protocol: the round trip in ms. */
async function getStatus(socket: string): Promise<number> {
  const start = performance.now();
  const status = await post(
    socket,
    "/harness.v1.RuleService/GetStatus",
    { "content-type": "application/json", "connect-protocol-version": "1" },
    "{}",
  );
  if (status !== 200) throw new Error(`GetStatus answered ${status}`);
  return performance.now() - start;
}

/** A gateway session: initialize, then `calls` count_journal calls pipelined; resolves when all answered. */
function scans(d: Daemon, calls: readonly Record<string, unknown>[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(path.join(path.dirname(d.socket), "harness-mcp.sock"));
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
          socket.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
          calls.forEach((args, i) => {
            const call = { name: "count_journal", arguments: args };
            socket.write(
              `${JSON.stringify({ jsonrpc: "2.0", id: i + 1, method: "tools/call", params: call })}\n`,
            );
          });
          continue;
        }
        answers.push(line.result?.content?.[0]?.text.slice(0, 120) ?? JSON.stringify(line).slice(0, 120));
        if (answers.length === calls.length) {
          socket.destroy();
          resolve(answers);
        }
      }
    });
    socket.write(`${JSON.stringify({ harness_mcp_token: d.gatewayToken })}\n`);
    socket.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } } })}\n`,
    );
  });
}

function hookCall(d: Daemon, cwd: string, i: number): Promise<number> {
  const payload = {
    session_id: `sess-${i}`,
    transcript_path: `/tmp/${i}.jsonl`,
    cwd,
    permission_mode: "default",
    hook_event_name: "PostToolUse",
    tool_name: "Bash",
    tool_input: { command: "ls" },
    tool_response: { stdout: "", stderr: "", interrupted: false },
    tool_use_id: `toolu_${i}`,
  };
  return post(
    d.socket,
    "/hooks/claude-code?harness=bench",
    { authorization: `Bearer ${d.observer}`, "content-type": "application/json" },
    JSON.stringify(payload),
  );
}

const pct = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};
const fmt = (xs: readonly number[]) =>
  `p50 ${pct(xs, 50).toFixed(1)} ms  p99 ${pct(xs, 99).toFixed(1)} ms  max ${Math.max(...xs).toFixed(1)} ms  (n=${xs.length})`;

async function run(label: string, cli: string, store: string): Promise<void> {
  const d = await startDaemon(cli, store);
  try {
    for (let i = 0; i < 20; i++) await getStatus(d.socket);
    const idle: number[] = [];
    for (let i = 0; i < IDLE_CALLS; i++) idle.push(await getStatus(d.socket));
    const cwds = Array.from({ length: HOOK_CALLS }, (_, i) => fs.mkdtempSync(path.join(d.dir, `cwd-${i}-`)));
    let loading = true;
    const loadStart = performance.now();
    const load = Promise.all([
      ...Array.from({ length: SESSIONS }, (_, s) =>
        scans(
          d,
          Array.from({ length: SCANS_PER_SESSION }, (_, k) =>
            (s * SCANS_PER_SESSION + k) % 2 === 0
              ? { selector: { tool: "Bash" }, within: "168h" }
              : { selector: { type: "tool", harness: `h${s}` }, within: "168h" },
          ),
        ),
      ),
      Promise.all(cwds.map((cwd, i) => hookCall(d, cwd, i))),
    ]).finally(() => {
      loading = false;
    });
    const loaded: number[] = [];
    while (loading) loaded.push(await getStatus(d.socket));
    const [sessionAnswers, hookStatuses] = await load.then((r) => [r.slice(0, SESSIONS), r[SESSIONS]]);
    const scanAnswers = (sessionAnswers as string[][]).flat();
    const loadMs = performance.now() - loadStart;
    console.log(`\n${label}: ${cli}`);
    console.log(`  GetStatus idle    ${fmt(idle)}`);
    console.log(`  GetStatus loaded  ${fmt(loaded)}`);
    console.log(`  p99 loaded / p99 idle: ${(pct(loaded, 99) / pct(idle, 99)).toFixed(1)}x  (goal <= 5x)`);
    console.log(
      `  load: ${SESSIONS * SCANS_PER_SESSION} count_journal + ${HOOK_CALLS} hook calls done in ${(loadMs / 1000).toFixed(1)} s; hook statuses ${[...new Set(hookStatuses as number[])].join(",")}`,
    );
    for (const a of new Set(scanAnswers.map((t) => t.replace(/\s+/g, " ").slice(0, 100))))
      console.log(`  scan: ${a}`);
  } finally {
    await d.stop();
  }
}

async function main(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "harness-contention-store-"));
  try {
    const store = path.join(tmp, "harness.db");
    const t = performance.now();
    buildStore(store);
    console.log(
      `store: ${ROWS.toLocaleString("en-US")} rows over 6 days, built in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    const baseline = process.env.BASELINE;
    if (baseline !== undefined) await run(`baseline ${baseline}`, cliOf(buildCommit(baseline)), store);
    await run("candidate", cliOf(CANDIDATE_DIR), store);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
