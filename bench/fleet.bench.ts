/**
 * `npm run bench:fleet` (issue 32): one rules daemon for machines on a network, on one machine through
 * real network namespaces (root; test/support/netns.ts). The daemon runs in a "server" namespace with
 * TLS on its own address; clients run in laptop namespaces and reach it only over their links
 * (`fleet-client.ts`). Two parts, one run:
 * 1. Round trips: Claude Code's hook calls (PreToolUse, PostToolUse) over TLS from a laptop, beside the
 *    same calls over loopback http to a daemon of the same build on the host, in rounds shuffled with a
 *    fixed seed so load lands on both alike. Each call opens a connection of its own, as a command hook
 *    does: over TLS that is a handshake per call. Goal: TLS p99 <= 2x loopback p99.
 * 2. A fleet's load: 50 simulated machines x 4 sessions (each machine a harness of its own) calling the
 *    TLS daemon from the laptops, and the same load to the loopback daemon from the host, at a realistic rate (a tool call per session every 10 s: 40 hook calls/s in all) and at
 *    10x it, open loop, for DURATION_S each: rows admitted per second, p50/p99 answer times, errors, the
 *    daemon's CPU (share of one core) and RSS, and the clients' own CPU (they share the machine's two
 *    cores with the daemon).
 * Env: RUNS (rounds of part 1, default 200, after 10 of warm-up), DURATION_S (each load, default 30),
 * SEED (the load's schedule, default 32).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as readline from "node:readline";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { makeHomes } from "../test/support/homes.js";
import { type Lab, makeLab, NETNS_AVAILABLE, SERVER_ADDRESS } from "../test/support/netns.js";
import { makeTestCerts, type TestCerts } from "../test/support/test-certs.js";
import { benchRepo } from "./bench-repo.js";
import { quantile, shuffler } from "./measure.js";

const RUNS = Number(process.env.RUNS ?? 200);
const WARMUP_ROUNDS = 10;
const DURATION_S = Number(process.env.DURATION_S ?? 30);
const SEED = Number(process.env.SEED ?? 32);
const MACHINES = 50;
const SESSIONS = 4;
/** A tool call per session every 10 s: an agent at work, between its model's turns. */
const REALISTIC_RATE = 0.1;
const BIN = path.resolve("dist/shell/cli/bin.cjs");
const CLIENT = fileURLToPath(new URL("./fleet-client.js", import.meta.url));

interface Box {
  readonly root: string;
  readonly env: NodeJS.ProcessEnv;
  readonly repo: string;
  readonly headers: Record<string, string>;
  readonly store: string;
}

/** A daemon's sandbox: its config (`server`: lines of `[server]`; `listen`: the hook endpoint's), tokens and a git repo. */
function sandbox(name: string, server: readonly string[], listen: string): Box {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `harness-fleet-bench-${name}-`)));
  const env = makeHomes(root);
  const token = (source: string) => {
    const value = randomBytes(32).toString("base64url");
    const file = path.join(root, `${source}.token`);
    fs.writeFileSync(file, `${value}\n`, { mode: 0o600 });
    return { file, value };
  };
  const observer = token("observer");
  const ledger = token("ledger");
  fs.mkdirSync(path.join(root, "config", "harness"), { recursive: true });
  fs.writeFileSync(
    path.join(root, "config", "harness", "harness.toml"),
    [
      "[server]",
      'metrics_listen = ""',
      ...server,
      "[server.producers]",
      `observer = ${JSON.stringify(observer.file)}`,
      `ledger = ${JSON.stringify(ledger.file)}`,
      "[agents]",
      `listen = ${JSON.stringify(listen)}`,
      "",
    ].join("\n"),
  );
  const repo = benchRepo(path.join(root, "repo"), "https://forge.example/org/fleet.git");
  return {
    root,
    env,
    repo,
    headers: { authorization: `Bearer ${observer.value}`, "x-harness-ledger-token": ledger.value },
    store: path.join(root, "state", "harness", "harness.db"),
  };
}

interface Daemon {
  readonly pid: number;
  readonly hooksUrl: string;
  stop(): Promise<void>;
}

/** `harness daemon` in `netns` (or on the host), resolved once it says where its hooks listen. */
function startDaemon(box: Box, netns?: string): Promise<Daemon> {
  const argv = [process.execPath, BIN, "daemon"];
  const child =
    netns === undefined
      ? spawn(argv[0] as string, argv.slice(1), { env: box.env, stdio: ["ignore", "ignore", "pipe"] })
      : spawn("ip", ["netns", "exec", netns, ...argv], { env: box.env, stdio: ["ignore", "ignore", "pipe"] });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return new Promise((resolve, reject) => {
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      const m = /hooks (https?:\S+)/.exec(stderr);
      if (m !== null && child.pid !== undefined)
        resolve({
          pid: child.pid,
          hooksUrl: m[1] as string,
          stop: () => {
            child.kill("SIGTERM");
            return exited;
          },
        });
    });
    child.on("exit", (code) => reject(new Error(`the daemon exited ${code}: ${stderr}`)));
  });
}

interface Client {
  /** Sends a line, resolves with the client's next line of output. */
  ask(line: string): Promise<string>;
  close(): void;
}

/** `fleet-client.js` in `netns` (or on the host), given its job. */
function startClient(job: object, netns?: string): Client {
  const argv = [process.execPath, CLIENT];
  const child =
    netns === undefined
      ? spawn(argv[0] as string, argv.slice(1), { stdio: ["pipe", "pipe", "inherit"] })
      : spawn("ip", ["netns", "exec", netns, ...argv], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  child.stdin.write(`${JSON.stringify(job)}\n`);
  return {
    ask: async (line) => {
      if (line !== "") child.stdin.write(`${line}\n`);
      const next = await lines.next();
      if (next.done === true) throw new Error("the fleet client ended");
      return next.value;
    },
    close: () => child.stdin.end(),
  };
}

/** A process's CPU time so far (user and system, with its children's it waited for: git), in ms. */
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  // utime, stime, cutime and cstime are the 14th to 17th fields of the line, in ticks (100 a second).
  return fields.slice(11, 15).reduce((ms, f) => ms + Number(f) * 10, 0);
}

/** A process's resident memory now and at its peak, in MiB. */
function rssMiB(pid: number): { now: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
  return { now: kib("VmRSS") / 1024, peak: kib("VmHWM") / 1024 };
}

function journalRows(store: string): number {
  const db = new Database(store, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("SELECT COUNT(*) AS n FROM rule_journal").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

const fmt = (ms: number) => ms.toFixed(1).padStart(7);

async function roundTrips(
  lab: Lab,
  tls: { box: Box; daemon: Daemon; ca: string },
  local: { box: Box; daemon: Daemon },
) {
  const laptop = lab.laptops[0]?.ns as string;
  const clients = {
    tls: startClient(
      {
        mode: "rounds",
        hooksUrl: tls.daemon.hooksUrl,
        headers: tls.box.headers,
        ca: tls.ca,
        repo: tls.box.repo,
        harness: "rt",
        session: "rt-tls",
      },
      laptop,
    ),
    loopback: startClient({
      mode: "rounds",
      hooksUrl: local.daemon.hooksUrl,
      headers: local.box.headers,
      repo: local.box.repo,
      harness: "rt",
      session: "rt-loopback",
    }),
  };
  const kinds = ["tls pre", "tls post", "loopback pre", "loopback post"] as const;
  const samples = new Map<string, number[]>(kinds.map((k) => [k, []]));
  const shuffle = shuffler(17);
  for (let round = -WARMUP_ROUNDS; round < RUNS; round++) {
    // A round's PreToolUse before its PostToolUse on each path, as an agent's calls come.
    const order = shuffle(["tls", "loopback"] as const).flatMap((p) => [`${p} pre`, `${p} post`] as const);
    for (const kind of order) {
      const [pathName, hook] = kind.split(" ") as ["tls" | "loopback", string];
      const { ms } = JSON.parse(await clients[pathName].ask(`${hook} ${round + WARMUP_ROUNDS}`)) as {
        ms: number;
      };
      if (round >= 0) samples.get(kind)?.push(ms);
    }
  }
  clients.tls.close();
  clients.loopback.close();
  console.log(`\n1. hook round trips, ${RUNS} rounds, a connection per call`);
  console.log("kind                 p50 ms   p90 ms   p99 ms");
  for (const [kind, xs] of samples)
    console.log(
      `${kind.padEnd(19)} ${fmt(quantile(xs, 0.5))}  ${fmt(quantile(xs, 0.9))}  ${fmt(quantile(xs, 0.99))}`,
    );
  const worst = (prefix: string) =>
    Math.max(...[...samples].filter(([k]) => k.startsWith(prefix)).map(([, xs]) => quantile(xs, 0.99)));
  const [t, l] = [worst("tls"), worst("loopback")];
  console.log(
    `goal: TLS between namespaces p99 <= 2x loopback http p99 (${(2 * l).toFixed(1)} ms): ${t.toFixed(1)} ms, ${(t / l).toFixed(2)}x, ${t <= 2 * l ? "met" : "NOT met"}`,
  );
}

interface LoadResult {
  readonly latencies: number[];
  readonly errors: number;
  readonly firstErrors: string[];
  readonly elapsedMs: number;
  readonly clientCpuMs: number;
}

/**
 * One load on `target`: over TLS its clients run in the laptops' namespaces, over loopback on the host,
 * split the same way (a process per laptop) so both meet the same client-side costs.
 */
async function fleetLoad(
  lab: Lab,
  target: { box: Box; daemon: Daemon; ca?: string },
  path: "tls" | "loopback",
  factor: number,
): Promise<void> {
  const machines = Array.from({ length: MACHINES }, (_, i) => `m${String(i + 1).padStart(2, "0")}`);
  const share = Math.ceil(MACHINES / lab.laptops.length);
  const rowsBefore = journalRows(target.box.store);
  const cpuBefore = cpuMs(target.daemon.pid);
  const results = await Promise.all(
    lab.laptops.map((laptop, i) =>
      startClient(
        {
          mode: "load",
          hooksUrl: target.daemon.hooksUrl,
          headers: target.box.headers,
          ...(target.ca === undefined ? {} : { ca: target.ca }),
          repo: target.box.repo,
          machines: machines.slice(i * share, (i + 1) * share).map((m) => `${m}-x${factor}`),
          sessionsPerMachine: SESSIONS,
          rate: REALISTIC_RATE * factor,
          durationMs: DURATION_S * 1000,
          seed: SEED + i,
        },
        path === "tls" ? laptop.ns : undefined,
      )
        .ask("")
        .then((line) => JSON.parse(line) as LoadResult),
    ),
  );
  // Rows the daemon admitted for calls answered in the window; its derivers may add a few of their own.
  const elapsed = Math.max(...results.map((r) => r.elapsedMs)) / 1000;
  const rows = journalRows(target.box.store) - rowsBefore;
  const cpu = (cpuMs(target.daemon.pid) - cpuBefore) / 1000;
  const rss = rssMiB(target.daemon.pid);
  const latencies = results.flatMap((r) => r.latencies);
  const errors = results.reduce((n, r) => n + r.errors, 0);
  const offered = MACHINES * SESSIONS * REALISTIC_RATE * factor * 2;
  console.log(
    `${`${factor}x ${path}`.padEnd(13)} ${offered.toFixed(0).padStart(7)}  ${(rows / elapsed).toFixed(1).padStart(9)}  ${fmt(quantile(latencies, 0.5))}  ${fmt(quantile(latencies, 0.99))}  ${String(errors).padStart(6)}  ${((100 * cpu) / elapsed).toFixed(0).padStart(10)}%  ${rss.now.toFixed(0).padStart(7)}/${rss.peak.toFixed(0)}  ${((100 * results.reduce((n, r) => n + r.clientCpuMs, 0)) / 1000 / elapsed).toFixed(0).padStart(10)}%`,
  );
  for (const e of results.flatMap((r) => r.firstErrors)) console.log(`  error: ${e}`);
}

async function main(): Promise<void> {
  if (!NETNS_AVAILABLE) throw new Error("bench:fleet needs root and iproute2 (ip netns): run it as root");
  if (!fs.existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first`);
  const lab = makeLab(2);
  let certs: TestCerts | undefined;
  const daemons: Daemon[] = [];
  const boxes: Box[] = [];
  try {
    certs = makeTestCerts([SERVER_ADDRESS]);
    const tlsBox = sandbox(
      "tls",
      [
        `tls_cert_file = ${JSON.stringify(certs.server.cert)}`,
        `tls_key_file = ${JSON.stringify(certs.server.key)}`,
      ],
      `${SERVER_ADDRESS}:0`,
    );
    const localBox = sandbox("loopback", [], "127.0.0.1:0");
    boxes.push(tlsBox, localBox);
    const tlsDaemon = await startDaemon(tlsBox, lab.server);
    daemons.push(tlsDaemon);
    const localDaemon = await startDaemon(localBox);
    daemons.push(localDaemon);
    const tls = { box: tlsBox, daemon: tlsDaemon, ca: certs.ca };
    console.log(
      `bench:fleet, ${os.cpus().length} CPUs, Node ${process.version}; daemon ${tlsDaemon.hooksUrl} in namespace ${lab.server}, laptops ${lab.laptops.map((l) => l.ns).join(", ")}`,
    );
    console.log(
      `load average before: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(", ")}`,
    );
    await roundTrips(lab, tls, { box: localBox, daemon: localDaemon });
    console.log(
      `\n2. ${MACHINES} machines x ${SESSIONS} sessions over TLS from ${lab.laptops.length} laptop namespaces, ${DURATION_S} s each, seed ${SEED}`,
    );
    console.log(
      "load          calls/s  rows/s    p50 ms   p99 ms  errors  daemon CPU  RSS MiB now/peak  clients CPU",
    );
    for (const factor of [1, 10])
      for (const p of ["tls", "loopback"] as const)
        await fleetLoad(lab, p === "tls" ? tls : { box: localBox, daemon: localDaemon }, p, factor);
    console.log(
      `load average after: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(", ")}`,
    );
  } finally {
    for (const d of daemons) await d.stop();
    for (const b of boxes) fs.rmSync(b.root, { recursive: true, force: true });
    certs?.dispose();
    lab.dispose();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
