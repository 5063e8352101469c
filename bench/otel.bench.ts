/**
 * `npm run bench:otel`: admission to decision (a row admitted to its fire seen by the decision
 * observers) on a real daemon, with no export, exporting to a live OTLP collector, and with the collector
 * down, side by side in one run, with the ratios to no export. Decision 0015: export never slows
 * evaluation. Env: SAMPLES (default 400), WARMUP (default 50).
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { loadRuleFile } from "../src/core/load-rule.js";
import { assembleRuleSet } from "../src/core/rule-set.js";
import { DaemonApp } from "../src/shell/app/daemon-app.js";
import type { GlobalConfig } from "../src/shell/config/global-config.js";
import { createLog } from "../src/shell/support/log.js";

const SAMPLES = Number(process.env.SAMPLES ?? 400);
const WARMUP = Number(process.env.WARMUP ?? 50);
const RULE = loadRuleFile(
  "rules/every-tool.toml",
  `name = "every-tool"
description = "fires on every tool call"
on = "run_event"
when = 'event.type == "tool"'
level = "notify"
target = "run"
message = "tool call in {{run}}"
`,
);

async function collector(): Promise<{ url: string; close: () => Promise<void>; received: () => number }> {
  let bytes = 0;
  const server = http.createServer((req, res) => {
    req.on("data", (c: Buffer) => {
      bytes += c.length;
    });
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/x-protobuf" });
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1/logs`,
    received: () => bytes,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A port nothing listens on: bound, then closed. */
async function downUrl(): Promise<string> {
  const c = await collector();
  const url = c.url;
  await c.close();
  return url;
}

interface Measured {
  readonly samples: number[];
  /** Records the collector took, and those dropped (by reason), once the daemon has stopped. */
  readonly exported: number;
  readonly dropped: string;
}

async function measure(otel: string | undefined): Promise<Measured> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-otel-bench-"));
  const sub = (p: string) => {
    const d = path.join(dir, p);
    fs.mkdirSync(d, { recursive: true, mode: 0o700 });
    return d;
  };
  const env = {
    HOME: dir,
    XDG_CONFIG_HOME: sub("config"),
    XDG_STATE_HOME: sub("state"),
    XDG_RUNTIME_DIR: sub("run"),
  };
  const token = path.join(dir, "observer.token");
  fs.writeFileSync(token, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600 });
  fs.writeFileSync(
    path.join(sub("config/harness"), "harness.toml"),
    [
      "[memory.rules]",
      'shadow_period = "0s"',
      "[server]",
      'metrics_listen = ""',
      "[server.producers]",
      `observer = ${JSON.stringify(token)}`,
      "[agents]",
      'listen = ""',
      ...(otel === undefined ? [] : ["[otel]", `endpoint = ${JSON.stringify(otel)}`]),
    ].join("\n"),
  );
  const daemon = await DaemonApp.start({
    env,
    log: createLog({ level: "error" }),
    loadRules: (config: GlobalConfig) =>
      assembleRuleSet({
        starter: [],
        policy: [{ repo: "bench", loads: [RULE] }],
        enforce: config.memory.rules.enforce,
        disable: config.memory.rules.disable,
        shadowPeriod: config.memory.rules.shadowPeriod,
      }),
  });
  let waiting: ((run: string) => void) | undefined;
  daemon.observeDecisions((d) => {
    if (d.kind === "fire") waiting?.(d.fire.target?.run ?? "");
  });
  const samples: number[] = [];
  try {
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      const run = `impl#${i + 1}`;
      const seen = new Promise<void>((resolve) => {
        waiting = (r) => {
          if (r === run) resolve();
        };
      });
      const start = process.hrtime.bigint();
      await daemon.admit("observer", [
        { kind: "run_event", type: "tool", harness: "impl", run, action: "edit" },
      ]);
      await seen;
      if (i >= WARMUP) samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  } finally {
    await daemon.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const exported = (await daemon.metrics.otelExported.get()).values[0]?.value ?? 0;
  const dropped = (await daemon.metrics.otelDropped.get()).values
    .map((v) => `${v.labels.reason}=${v.value}`)
    .join(" ");
  return { samples: samples.sort((a, b) => a - b), exported, dropped: dropped || "none" };
}

const pct = (s: number[], p: number) =>
  s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;

const live = await collector();
const down = await downUrl();
const runs: [string, Measured][] = [
  ["no export", await measure(undefined)],
  ["live collector", await measure(live.url)],
  ["collector down", await measure(down)],
];
const received = live.received();
await live.close();
const [base] = runs;
console.log(`admission → decision, ${SAMPLES} rows each (after ${WARMUP} warm-up), one run`);
console.log("setup            p50 ms   p99 ms   p50 ratio  p99 ratio  exported  dropped");
for (const [name, m] of runs) {
  const s = m.samples;
  const b = base?.[1].samples ?? s;
  const r50 = pct(s, 50) / pct(b, 50);
  const r99 = pct(s, 99) / pct(b, 99);
  console.log(
    `${name.padEnd(16)} ${pct(s, 50).toFixed(3).padStart(6)}   ${pct(s, 99).toFixed(3).padStart(6)}   ${r50.toFixed(2).padStart(8)}   ${r99.toFixed(2).padStart(8)}  ${String(m.exported).padStart(8)}  ${m.dropped}`,
  );
}
console.log(`the live collector received ${received} bytes of OTLP`);
