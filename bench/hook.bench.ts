/**
 * `npm run bench:hook`: the agent hook's round trip (issue 17), p50 and p99 of a PreToolUse and a
 * PostToolUse call on both paths, beside a bare `node -e ''` start in the same run:
 * - command: the hook as install writes it on a machine with a C compiler, the native client
 *   (`hook-client.c`, built as install builds it) `NODE bin.cjs hook claude-code …`: no Node start while
 *   the daemon answers (docs/decisions/0013), payload on stdin, the daemon's answer on stdout, timed
 *   from spawn to exit;
 * - sh: what install writes where no compiler builds the client, `/bin/sh harness-hook.sh …` (sh, curl);
 * - forwarder: the Node forwarder alone (`node bin.cjs hook claude-code …`), what the fast path hands
 *   a call to when it cannot take it, and what install wrote before it;
 * - relay floor: `bench/relay-floor.c`, compiled here with cc, a client that only connects and relays
 *   (no checks at all): the least any command could cost on this machine;
 * - http: Claude Code's http hook, a POST to `[agents] listen`, timed from request to answer body.
 * Goals: the command path's p99 within 0.25x the bare start (issue 30), the forwarder's within 1.5x; the
 * http path's p99 under 10% of it. Beside them, the http path's own floor: a null server in its own
 * process, timed by the same client.
 *
 * Every round makes one call of each kind, in an order shuffled per round (a fixed seed), so a busy
 * neighbour lands on all kinds alike and no kind always follows the same one (a PostToolUse's commit
 * would otherwise always land on the same next call). Each round's tool call has an input of its own,
 * as an agent's calls do: repeating one input would trip the loop guard and time stopped runs. The daemon
 * runs in a process of its own, as in use (its commits' fsyncs would otherwise hold this process's
 * event loop and show in the timings), on a temporary store, in a temporary git repo: the real
 * `harness daemon`, with its real verdicts (holds, stops and the loop guard, read from the store).
 * p90 is printed beside p99: on a shared machine one descheduled sample moves a p99 of 200 by hundreds
 * of ms, a p90 much less.
 * Env: RUNS (rounds, default 200, after 10 rounds of warm-up: p99 is the 2nd worst of 200 samples);
 * HARNESS_BIN (the `harness` executable to time, default this checkout's dist/shell/cli/bin.cjs);
 * BASELINE_BIN (another build's bin.cjs, e.g. main's before a change, inside a checkout with node_modules:
 * its daemon runs beside this one and its calls are timed in the same shuffled rounds, so the two builds
 * meet the same load; the goals are judged on HARNESS_BIN's figures); or BASELINE (a commit, e.g.
 * `BASELINE=e4eabc5`, issue 26's before: hook rows answered once queued, not once committed): that
 * commit's tree exported with `git archive` and built once under the temp dir, its bin.cjs the baseline.
 *
 * Attempts (docs/decisions/0005-attempt-event.md): a PreToolUse is an `attempt_event` row whose answer
 * waits for its evaluation. `BASELINE=a5216dc` is the build before, where PreToolUse recorded nothing
 * and only asked the verdict: goal, http PreToolUse p99 (attempts that fire nothing) <= 1.5x the
 * baseline's. Beside it, attempts that fire: each a new session's force push, which an enforced stop
 * rule on `attempt_event` (served from a local policy repo) refuses, sent to a daemon of this build of
 * their own (`contender`'s comment says why); and one FULL (synchronous) SQLite commit in WAL mode on the same
 * disk, what a fire's decisions cost at least.
 */
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { buildHookClient } from "../src/shell/agents/install/hook-client.js";
import { benchRepo } from "./bench-repo.js";
import { payloads } from "./hook-payloads.js";
import { quantile, shuffler } from "./measure.js";

const RUNS = Number(process.env.RUNS ?? 200);
/** The compiled relay floor (`relay-floor.c`), or undefined where no C compiler is found. */
const RELAY_FLOOR = buildRelayFloor();
const WARMUP_ROUNDS = 10;
const BIN = path.resolve(process.env.HARNESS_BIN ?? "dist/shell/cli/bin.cjs");
const BASELINE_BIN =
  process.env.BASELINE_BIN !== undefined
    ? path.resolve(process.env.BASELINE_BIN)
    : process.env.BASELINE !== undefined
      ? baselineBin(process.env.BASELINE)
      : undefined;

function buildRelayFloor(): string | undefined {
  const out = path.join(os.tmpdir(), `harness-relay-floor-${process.pid}`);
  const source = fileURLToPath(new URL("../../bench/relay-floor.c", import.meta.url));
  try {
    execFileSync("cc", ["-O2", "-o", out, source], { stdio: ["ignore", "ignore", "inherit"] });
    process.on("exit", () => fs.rmSync(out, { force: true }));
    return out;
  } catch {
    process.stderr.write("no C compiler (cc): the relay floor is not measured\n");
    return undefined;
  }
}

/** `commit`'s `harness` executable, built now unless an earlier run built it (`baseline-build.ts`'s way). */
function baselineBin(commit: string): string {
  const sha = execFileSync("git", ["rev-parse", "--verify", `${commit}^{commit}`], {
    encoding: "utf8",
  }).trim();
  const dir = path.join(os.tmpdir(), `harness-hook-baseline-${sha.slice(0, 12)}`);
  const bin = path.join(dir, "dist", "shell", "cli", "bin.cjs");
  const modules = path.join(dir, "node_modules");
  if (fs.existsSync(bin)) {
    // Built by another checkout, since removed: its node_modules link now points nowhere.
    if (!fs.existsSync(modules)) {
      fs.rmSync(modules, { force: true });
      fs.symlinkSync(path.resolve("node_modules"), modules, "dir");
    }
    return bin;
  }
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const tar = path.join(dir, "tree.tar");
  execFileSync("git", ["archive", "--format=tar", "-o", tar, sha]);
  execFileSync("tar", ["-xf", tar, "-C", dir]);
  fs.rmSync(tar);
  fs.symlinkSync(path.resolve("node_modules"), modules, "dir");
  process.stderr.write(`building ${commit} (${sha.slice(0, 12)}) in ${dir} …\n`);
  execFileSync("npm", ["run", "-s", "build"], { cwd: dir, stdio: "inherit" });
  return bin;
}

interface RunningDaemon {
  readonly socketPath: string;
  readonly hooksUrl: string;
  stop(): Promise<void>;
}

/** The daemon, in its own process; resolves once it says where it listens. */
function startDaemon(bin: string, env: NodeJS.ProcessEnv): Promise<RunningDaemon> {
  const child = spawn(process.execPath, [bin, "daemon"], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return new Promise((resolve, reject) => {
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      const m = /socket (\S+), (?:rpc \S+, )?metrics \S+, hooks (http:\S+)/.exec(stderr);
      if (m !== null)
        resolve({
          socketPath: (m[1] as string).replace(/,$/, ""),
          hooksUrl: m[2] as string,
          stop: () => {
            child.kill("SIGTERM");
            return exited;
          },
        });
    });
    child.on("exit", (code) => reject(new Error(`the daemon exited ${code}: ${stderr}`)));
    // A start line the bench does not recognise is an error, not a wait without end.
    setTimeout(
      () => reject(new Error(`the daemon's start line was not seen in 60 s: ${stderr}`)),
      60_000,
    ).unref();
  });
}

/** The enforced stop rule over attempts the firing calls meet, as a policy repo's file. */
const FIRE_RULE = `name = "bench-force-push"
description = "A force push is refused before it runs."
on = "attempt_event"
when = 'event.tool == "Bash" && event.action == "exec"'
level = "stop"
cooldown = "1m"
target = "run"
message = "{{run}} tried a force push"
`;

/** A local policy repo holding FIRE_RULE, declared in the config and synced before the daemon starts. */
function policyRepo(root: string): string {
  const dir = path.join(root, "policy");
  fs.mkdirSync(path.join(dir, "rules"), { recursive: true });
  fs.writeFileSync(path.join(dir, "rules", "bench-force-push.toml"), FIRE_RULE);
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@example.com", ...args], { cwd: dir });
  git("init", "-q", "-b", "main");
  git("add", ".");
  git("commit", "-q", "-m", "rules");
  return dir;
}

function sandbox() {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "harness-hook-bench-")));
  const dir = (name: string) => {
    const d = path.join(root, name);
    fs.mkdirSync(d, { recursive: true, mode: 0o700 });
    return d;
  };
  const env = {
    PATH: process.env.PATH,
    HOME: root,
    XDG_CONFIG_HOME: dir("config"),
    XDG_STATE_HOME: dir("state"),
    XDG_RUNTIME_DIR: dir("run"),
  };
  const token = (name: string) => {
    const f = path.join(root, `${name}.token`);
    fs.writeFileSync(f, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600 });
    return f;
  };
  const observer = token("observer");
  const ledger = token("ledger");
  fs.mkdirSync(path.join(root, "config", "harness"), { recursive: true });
  const policy = policyRepo(root);
  fs.writeFileSync(
    path.join(root, "config", "harness", "harness.toml"),
    [
      "[memory.rules]",
      'enforce = ["bench-force-push"]',
      'shadow_period = "0s"',
      "[policy_repo.bench]",
      `remote = ${JSON.stringify(policy)}`,
      'branch = "main"',
      "[server]",
      'metrics_listen = ""',
      "[server.producers]",
      `observer = ${JSON.stringify(observer)}`,
      `ledger = ${JSON.stringify(ledger)}`,
      "[agents]",
      'listen = "127.0.0.1:0"',
    ].join("\n"),
  );
  const repo = benchRepo(dir("repo"), "https://forge.example/org/bench.git");
  return { root, env, observer, ledger, repo };
}

/** Wall time of one child process, spawn to exit, in ms; it must exit 0 having printed nothing. */
function timeProcess(
  argv: readonly [string, ...string[]],
  env: NodeJS.ProcessEnv,
  stdin?: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const [program, ...args] = argv;
    const child = spawn(program, args, { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    // `close`, not `exit`: the answer on stdout has then been read whole.
    child.on("close", (code) => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      // An allowed call answers nothing: a denial (a stopped or held run) would time another path.
      if (code !== 0 || stderr !== "" || stdout !== "")
        reject(new Error(`${argv.join(" ")} exited ${code}: ${stderr}${stdout}`));
      else resolve(ms);
    });
    // A child that exits without reading its stdin (the bare start) makes this write fail with EPIPE;
    // that is no failure of the call, which its exit code and output judge.
    child.stdin.on("error", () => {});
    child.stdin.end(stdin ?? "");
  });
}

async function timeHttp(
  url: string,
  headers: Record<string, string>,
  body: string,
  denied = false,
): Promise<number> {
  const start = process.hrtime.bigint();
  const res = await fetch(url, { method: "POST", headers, body });
  const answer = await res.text();
  // An allowed call answers nothing; a firing attempt must be refused, or another path was timed.
  const expected = denied ? answer.includes('"permissionDecision":"deny"') : answer === "";
  if (res.status !== 200 || !expected) throw new Error(`http hook answered ${res.status}: ${answer}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Round `n`'s firing attempt: a new session's force push (the stop ends its run). */
const firingAttempt = (repo: string, n: number) =>
  JSON.stringify({
    session_id: `bench-fire-${n}`,
    transcript_path: "/t.jsonl",
    cwd: repo,
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: `git push --force origin main # ${n}` },
    tool_use_id: `toolu_fire_${n}`,
  });

/** One FULL (synchronous) commit of a small row in WAL mode, in a store of its own under `dir`. */
function fullCommit(dir: string): (n: number) => Promise<number> {
  const db = new Database(path.join(dir, "full-commit.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.exec("CREATE TABLE IF NOT EXISTS t (n INTEGER, v TEXT)");
  const insert = db.prepare("INSERT INTO t (n, v) VALUES (?, ?)");
  return async (n) => {
    const start = process.hrtime.bigint();
    insert.run(n, "x".repeat(200));
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
}

/**
 * The http path's floor on this machine: a server in a process of its own that reads the body, parses
 * it and answers 200 with nothing, timed by the same client. The hook's p99 cannot be far below it.
 */
const NULL_SERVER = `const s = require("node:http").createServer((req, res) => {
  const c = [];
  req.on("data", (d) => c.push(d));
  req.on("end", () => { JSON.parse(Buffer.concat(c).toString()); res.end(""); });
});
s.listen(0, "127.0.0.1", () => process.stdout.write(String(s.address().port) + "\\n"));`;

async function nullServer(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, ["-e", NULL_SERVER], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve) =>
    child.stdout.once("data", (d) => resolve(String(d).trim())),
  );
  return { url: `http://127.0.0.1:${port}/`, stop: () => child.kill() };
}

const load = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");

/** A build under test: its daemon in a sandbox of its own, and its four timed calls. */
interface Contender {
  readonly kinds: Record<string, (n: number) => Promise<number>>;
  stop(): Promise<void>;
}

/**
 * One daemon of `bin` and its kinds of call. The quiet kinds and the firing ones go to daemons of their
 * own: a firing attempt is a new session stopped at once, whose decisions commit with an fsync and whose
 * stop is then delivered and its run closed; a quiet call that followed it into the same daemon would
 * wait behind that, which the baseline (where nothing fires) never does. One firing call in every seven
 * is no agent's day; the firing daemon still loads the same two CPUs and disk for every kind.
 */
async function contender(bin: string, suffix: string, firing = false): Promise<Contender> {
  const box = sandbox();
  execFileSync(process.execPath, [bin, "policy", "sync"], { env: box.env, stdio: "ignore" });
  const daemon = await startDaemon(bin, box.env);
  const tokens = {
    observer: fs.readFileSync(box.observer, "utf8").trim(),
    ledger: fs.readFileSync(box.ledger, "utf8").trim(),
  };
  const headers = { authorization: `Bearer ${tokens.observer}`, "x-harness-ledger-token": tokens.ledger };
  const hookWords = [
    "hook",
    "claude-code",
    "--harness",
    "bench",
    "--observer-token",
    box.observer,
    "--ledger-token",
    box.ledger,
    "--socket",
    daemon.socketPath,
  ];
  const forwarderDir = path.join(path.dirname(bin), "..", "agents", "forwarder");
  const script = path.join(forwarderDir, "harness-hook.sh");
  const viaScript = fs.existsSync(script);
  const client = viaScript
    ? buildHookClient(box.env, path.join(forwarderDir, "hook-client.c"), false)
    : undefined;
  if (client !== undefined && !("path" in client)) throw new Error(`the native client: ${client.problem}`);
  // A baseline built before the fast paths has only its forwarder.
  const commandArgv =
    client === undefined
      ? ([process.execPath, bin, ...hookWords] as const)
      : ([client.path, process.execPath, bin, ...hookWords] as const);
  const shArgv = ["/bin/sh", script, process.execPath, bin, ...hookWords] as const;
  const forwarderArgv = [process.execPath, bin, ...hookWords] as const;
  const relayArgv =
    RELAY_FLOOR === undefined || firing
      ? undefined
      : ([
          RELAY_FLOOR,
          daemon.socketPath,
          "/hooks/claude-code?harness=bench",
          box.observer,
          box.ledger,
        ] as const);
  const url = `${daemon.hooksUrl}claude-code?harness=bench`;
  return {
    kinds: firing
      ? {
          "http PreToolUse firing": (n: number) =>
            timeHttp(
              `${daemon.hooksUrl}claude-code?harness=benchfire`,
              headers,
              firingAttempt(box.repo, n),
              true,
            ),
          "sqlite FULL commit": fullCommit(box.root),
        }
      : {
          [`command PreToolUse${suffix}`]: (n) =>
            timeProcess(commandArgv, box.env, payloads(box.repo, "bench-command", n).PreToolUse),
          [`command PostToolUse${suffix}`]: (n) =>
            timeProcess(commandArgv, box.env, payloads(box.repo, "bench-command", n).PostToolUse),
          ...(viaScript
            ? {
                [`sh PreToolUse${suffix}`]: (n: number) =>
                  timeProcess(shArgv, box.env, payloads(box.repo, "bench-sh", n).PreToolUse),
                [`sh PostToolUse${suffix}`]: (n: number) =>
                  timeProcess(shArgv, box.env, payloads(box.repo, "bench-sh", n).PostToolUse),
                [`forwarder PreToolUse${suffix}`]: (n: number) =>
                  timeProcess(forwarderArgv, box.env, payloads(box.repo, "bench-forwarder", n).PreToolUse),
                [`forwarder PostToolUse${suffix}`]: (n: number) =>
                  timeProcess(forwarderArgv, box.env, payloads(box.repo, "bench-forwarder", n).PostToolUse),
              }
            : {}),
          ...(relayArgv === undefined || suffix !== ""
            ? {}
            : {
                "relay floor PreToolUse": (n: number) =>
                  timeProcess(relayArgv, box.env, payloads(box.repo, "bench-relay", n).PreToolUse),
                "relay floor PostToolUse": (n: number) =>
                  timeProcess(relayArgv, box.env, payloads(box.repo, "bench-relay", n).PostToolUse),
              }),
          [`http PreToolUse${suffix}`]: (n) =>
            timeHttp(url, headers, payloads(box.repo, "bench-http", n).PreToolUse),
          [`http PostToolUse${suffix}`]: (n) =>
            timeHttp(url, headers, payloads(box.repo, "bench-http", n).PostToolUse),
        },
    stop: async () => {
      await daemon.stop();
      fs.rmSync(box.root, { recursive: true, force: true });
    },
  };
}

async function main(): Promise<void> {
  for (const bin of [BIN, BASELINE_BIN])
    if (bin !== undefined && !fs.existsSync(bin))
      throw new Error(`${bin} is missing: run npm run build first`);
  // Only this build judges attempts, so only it has firing calls (a harness of its own keeps its stops' holds off the rest).
  const contenders = [await contender(BIN, ""), await contender(BIN, "", true)];
  if (BASELINE_BIN !== undefined) contenders.push(await contender(BASELINE_BIN, " [baseline]"));
  const floor = await nullServer();
  try {
    const env = { PATH: process.env.PATH };
    const kinds: Record<string, (n: number) => Promise<number>> = {
      "bare node -e ''": () => timeProcess([process.execPath, "-e", ""], env),
      "http null server": (n) => timeHttp(floor.url, {}, payloads("/repo", "bench-null", n).PostToolUse),
      ...Object.assign({}, ...contenders.map((c) => c.kinds)),
    };
    const samples = new Map<string, number[]>(Object.keys(kinds).map((k) => [k, []]));
    const shuffle = shuffler(17);
    const loadBefore = load();
    // Warm-up rounds, not counted: the page cache, the daemons' JIT and their git facts.
    for (let round = -WARMUP_ROUNDS; round < RUNS; round++)
      for (const name of shuffle(Object.keys(kinds))) {
        const ms = await (kinds[name] as (n: number) => Promise<number>)(round + WARMUP_ROUNDS);
        if (round >= 0) samples.get(name)?.push(ms);
      }

    const bare = samples.get("bare node -e ''") as number[];
    const bareP50 = quantile(bare, 0.5);
    const bareP99 = quantile(bare, 0.99);
    console.log(`hook round trip, ${RUNS} rounds, ${os.cpus().length} CPUs, Node ${process.version}, ${BIN}`);
    if (BASELINE_BIN !== undefined) console.log(`baseline: ${BASELINE_BIN}`);
    console.log(`load average before: ${loadBefore}; after: ${load()}`);
    console.log("kind                     p50 ms   p90 ms   p99 ms   p99 / bare p99");
    for (const [name, xs] of samples) {
      const p99 = quantile(xs, 0.99);
      console.log(
        `${name.padEnd(23)} ${quantile(xs, 0.5).toFixed(1).padStart(7)}  ${quantile(xs, 0.9).toFixed(1).padStart(7)}  ${p99.toFixed(1).padStart(7)}   ${(p99 / bareP99).toFixed(3)}`,
      );
    }
    const worst = (prefix: string) =>
      Math.max(
        ...[...samples]
          .filter(
            ([n]) =>
              n.startsWith(prefix) &&
              !n.endsWith("[baseline]") &&
              n !== "http null server" &&
              n !== "http PreToolUse firing",
          )
          .map(([, xs]) => quantile(xs, 0.99)),
      );
    const command = worst("command");
    const http = worst("http");
    console.log(
      `goal: command p99 <= 0.25x bare p99 (${(0.25 * bareP99).toFixed(1)} ms): ${command.toFixed(1)} ms, ${(command / bareP99).toFixed(3)}x, ${command <= 0.25 * bareP99 ? "met" : "NOT met"}`,
    );
    if (samples.has("sh PreToolUse")) {
      const sh = worst("sh");
      console.log(
        `sh and curl (no C compiler) p99: ${sh.toFixed(1)} ms, ${(sh / bareP99).toFixed(3)}x bare p99`,
      );
    }
    if (samples.has("forwarder PreToolUse")) {
      const forwarder = worst("forwarder");
      console.log(
        `goal: forwarder p99 (the fast path's handover) <= 1.5x bare p99 (${(1.5 * bareP99).toFixed(1)} ms): ${forwarder.toFixed(1)} ms, ${forwarder <= 1.5 * bareP99 ? "met" : "NOT met"}`,
      );
    }
    if (samples.has("relay floor PreToolUse")) {
      const floorP99 = worst("relay floor");
      console.log(
        `command p99 ${command.toFixed(1)} ms against the compiled relay's ${floorP99.toFixed(1)} ms, the floor of a command on this machine: ${(command / floorP99).toFixed(2)}x`,
      );
    }
    console.log(
      `goal: http p99 < 10% of bare p99 (${(0.1 * bareP99).toFixed(1)} ms): ${http.toFixed(1)} ms, ${http < 0.1 * bareP99 ? "met" : "NOT met"}`,
    );
    const nullP99 = quantile(samples.get("http null server") as number[], 0.99);
    console.log(
      `http path p99 ${http.toFixed(1)} ms against the null server's ${nullP99.toFixed(1)} ms, the floor of this client on this machine: ${(http / nullP99).toFixed(2)}x`,
    );
    console.log(`bare node start p50 ${bareP50.toFixed(1)} ms (the issue's figure for this machine: 138 ms)`);
    const pre = samples.get("http PreToolUse");
    const preBaseline = samples.get("http PreToolUse [baseline]");
    if (pre !== undefined && preBaseline !== undefined) {
      const [now, before] = [quantile(pre, 0.99), quantile(preBaseline, 0.99)];
      console.log(
        `goal: http PreToolUse p99 (attempts firing nothing) <= 1.5x the baseline's (${(1.5 * before).toFixed(1)} ms): ${now.toFixed(1)} ms, ${(now / before).toFixed(2)}x, ${now <= 1.5 * before ? "met" : "NOT met"}`,
      );
    }
    const firing = samples.get("http PreToolUse firing");
    const full = samples.get("sqlite FULL commit");
    if (firing !== undefined && full !== undefined)
      console.log(
        `attempts that fire (an enforced stop): p50 ${quantile(firing, 0.5).toFixed(1)} ms, p99 ${quantile(firing, 0.99).toFixed(1)} ms; one FULL commit: p50 ${quantile(full, 0.5).toFixed(1)} ms, p99 ${quantile(full, 0.99).toFixed(1)} ms`,
      );
  } finally {
    floor.stop();
    for (const c of contenders) await c.stop();
  }
}

await main();
