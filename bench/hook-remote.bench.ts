/**
 * `npm run bench:hook-remote`: a remote install's hook round trip (decision 0017), beside the local
 * paths in the same run, p50/p90/p99 of PreToolUse and PostToolUse calls, against a real `harness
 * daemon` whose TCP listeners serve TLS (a CA and a server certificate made here with openssl):
 * - bare: `node -e ''`, a Node start;
 * - forwarder, socket: the Node forwarder over the daemon's socket (a local install's fallback path);
 * - forwarder, TLS: what a remote install writes, `node bin.cjs hook … --daemon https://… --ca-file CA`:
 *   git facts computed in the hook (three git processes), the call posted over https; and the same
 *   with the payload's cwd outside any repository (no git), which tells the facts' cost from TLS's;
 * - curl, TLS: `curl --cacert CA` posting the payload to the same endpoint, no facts: the floor of an
 *   sh and curl path over TLS (the script's own checks, about 0.3x a Node start locally, come on top).
 * Rounds shuffle the kinds' order (a fixed seed). Env: RUNS (default 100, after 5 warm-up rounds).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { makeHomes } from "../test/support/homes.js";
import { makeTestCerts } from "../test/support/test-certs.js";
import { benchRepo } from "./bench-repo.js";

const RUNS = Number(process.env.RUNS ?? 100);
const WARMUP = 5;
const BIN = path.resolve(process.env.HARNESS_BIN ?? "dist/shell/cli/bin.cjs");

function sandbox() {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "harness-hook-remote-bench-")));
  const env = makeHomes(root);
  const token = (name: string) => {
    const f = path.join(root, `${name}.token`);
    fs.writeFileSync(f, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600 });
    return f;
  };
  const observer = token("observer");
  const ledger = token("ledger");
  const tls = makeTestCerts();
  fs.mkdirSync(path.join(root, "config", "harness"), { recursive: true });
  fs.writeFileSync(
    path.join(root, "config", "harness", "harness.toml"),
    [
      "[server]",
      'metrics_listen = ""',
      `tls_cert_file = ${JSON.stringify(tls.server.cert)}`,
      `tls_key_file = ${JSON.stringify(tls.server.key)}`,
      "[server.producers]",
      `observer = ${JSON.stringify(observer)}`,
      `ledger = ${JSON.stringify(ledger)}`,
      "[agents]",
      'listen = "127.0.0.1:0"',
    ].join("\n"),
  );
  const repo = benchRepo(path.join(root, "repo"), "https://forge.example/org/bench.git");
  return { root, env, observer, ledger, repo, ca: tls.ca, certs: tls };
}

function startDaemon(env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [BIN, "daemon"], { env, stdio: ["ignore", "ignore", "pipe"] });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return new Promise<{ socket: string; hooks: string; stop(): Promise<void> }>((resolve, reject) => {
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      const socket = /socket (\S+?),/.exec(stderr)?.[1];
      const hooks = /hooks (https:\/\/[^\s,]+)/.exec(stderr)?.[1];
      if (socket !== undefined && hooks !== undefined)
        resolve({
          socket,
          hooks,
          stop: () => {
            child.kill("SIGTERM");
            return exited;
          },
        });
    });
    child.on("exit", (code) => reject(new Error(`the daemon exited ${code}: ${stderr}`)));
  });
}

const payloads = (repo: string, session: string, n: number) => {
  const common = { session_id: session, transcript_path: "/t.jsonl", cwd: repo, permission_mode: "default" };
  const tool = {
    tool_name: "Edit",
    tool_input: { file_path: `${repo}/src/${session}.ts`, old_string: `a${n}`, new_string: "b" },
    tool_use_id: `toolu_${session}_${n}`,
  };
  return {
    PreToolUse: JSON.stringify({ ...common, hook_event_name: "PreToolUse", ...tool }),
    PostToolUse: JSON.stringify({
      ...common,
      hook_event_name: "PostToolUse",
      ...tool,
      tool_response: { success: true },
    }),
  };
};

function timeProcess(argv: readonly string[], env: NodeJS.ProcessEnv, stdin: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const [program, ...args] = argv;
    const child = spawn(program as string, args, { env, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.on("close", (code) => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (code !== 0 || out !== "") reject(new Error(`${argv.join(" ")} exited ${code}: ${out}`));
      else resolve(ms);
    });
    child.stdin.on("error", () => {});
    child.stdin.end(stdin);
  });
}

const pct = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] as number;
};

async function main(): Promise<void> {
  const box = sandbox();
  const daemon = await startDaemon(box.env);
  const token = (f: string) => fs.readFileSync(f, "utf8").trim();
  const hook = (where: string[]) => [
    process.execPath,
    BIN,
    "hook",
    "claude-code",
    "--harness",
    "bench",
    "--observer-token",
    box.observer,
    "--ledger-token",
    box.ledger,
    ...where,
  ];
  const kinds: Record<string, (event: "PreToolUse" | "PostToolUse", body: string) => Promise<number>> = {
    bare: () => timeProcess([process.execPath, "-e", ""], box.env, ""),
    "forwarder, socket": (_e, body) => timeProcess(hook(["--socket", daemon.socket]), box.env, body),
    "forwarder, TLS": (_e, body) =>
      timeProcess(hook(["--daemon", daemon.hooks, "--ca-file", box.ca]), box.env, body),
    // The same outside any repository: no git runs, so the difference is what the facts cost.
    "forwarder, TLS, no repo": (_e, body) =>
      timeProcess(
        hook(["--daemon", daemon.hooks, "--ca-file", box.ca]),
        box.env,
        body.replaceAll(JSON.stringify(box.repo), JSON.stringify(box.root)),
      ),
    "curl, TLS": (_e, body) =>
      timeProcess(
        [
          "curl",
          "-sS",
          "--cacert",
          box.ca,
          "-H",
          "Content-Type: application/json",
          "-H",
          `Authorization: Bearer ${token(box.observer)}`,
          "-H",
          `x-harness-ledger-token: ${token(box.ledger)}`,
          "--data-binary",
          "@-",
          `${daemon.hooks}/hooks/claude-code?harness=bench`,
        ],
        box.env,
        body,
      ),
  };
  const samples = new Map<string, number[]>();
  let seed = 17;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  try {
    for (let round = -WARMUP; round < RUNS; round++) {
      const names = Object.keys(kinds).sort(() => random() - 0.5);
      for (const name of names)
        for (const event of ["PreToolUse", "PostToolUse"] as const) {
          const session = `s-${name.replace(/\W/g, "")}`;
          const body = payloads(box.repo, session, round + WARMUP)[event];
          const ms = await (kinds[name] as (e: typeof event, b: string) => Promise<number>)(event, body);
          if (round < 0) continue;
          const key = `${name} ${event}`;
          samples.set(key, [...(samples.get(key) ?? []), ms]);
        }
    }
  } finally {
    await daemon.stop();
    fs.rmSync(box.root, { recursive: true, force: true });
    box.certs.dispose();
  }
  console.log(
    `remote hook round trip, ${RUNS} rounds, ${os.cpus().length} CPUs, load ${os.loadavg()[0]?.toFixed(1)}, Node ${process.version}`,
  );
  const bare = pct(samples.get("bare PreToolUse") ?? [], 99);
  for (const [key, xs] of samples) {
    if (key === "bare PostToolUse") continue;
    const p99 = pct(xs, 99);
    console.log(
      `${key.padEnd(32)} p50 ${pct(xs, 50).toFixed(1).padStart(6)} ms  p90 ${pct(xs, 90).toFixed(1).padStart(6)} ms  p99 ${p99.toFixed(1).padStart(6)} ms  (${(p99 / bare).toFixed(2)}x bare p99)`,
    );
  }
}

await main();
