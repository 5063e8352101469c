/**
 * `bench:fleet`'s client, run inside a laptop's network namespace (or the host's, for loopback): hook
 * calls as a command hook makes them, each on a connection of its own (a TLS handshake per call over
 * https), timed from request to the answer's last byte. Reads one JSON job on stdin, writes its result
 * as one JSON line on stdout.
 * - `{"mode":"rounds", …}`: then one line per call to make (`"pre"` or `"post"`, a round number), each
 *   answered with its time, so the parent can interleave kinds across processes.
 * - `{"mode":"load", …}`: sessions calling at a Poisson rate for a while, open loop (a session's next
 *   tool call is due at its own time; it waits only for its previous call's answer, as an agent does).
 */
import * as fs from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import * as readline from "node:readline";
import { payloads } from "./hook-payloads.js";

interface Target {
  /** The hook endpoint's base, `…/hooks/`. */
  readonly hooksUrl: string;
  readonly headers: Record<string, string>;
  /** The CA file to trust over https. */
  readonly ca?: string;
  readonly repo: string;
}

interface LoadJob extends Target {
  readonly mode: "load";
  /** Harness names, one per simulated machine. */
  readonly machines: readonly string[];
  readonly sessionsPerMachine: number;
  /** Tool calls per second per session (each a PreToolUse and a PostToolUse). */
  readonly rate: number;
  readonly durationMs: number;
  readonly seed: number;
}

interface RoundsJob extends Target {
  readonly mode: "rounds";
  readonly harness: string;
  readonly session: string;
}

/** One POST on a connection of its own; resolves with its time in ms, rejects on anything but 200. */
function post(target: Target, ca: Buffer | undefined, harness: string, body: string): Promise<number> {
  const url = new URL(`claude-code?harness=${encodeURIComponent(harness)}`, target.hooksUrl);
  const start = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const options = {
      method: "POST",
      headers: {
        ...target.headers,
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
      },
      agent: false as const,
    };
    const onResponse = (res: http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () => {
        const answer = Buffer.concat(chunks).toString();
        if (res.statusCode !== 200) reject(new Error(`answered ${res.statusCode}: ${answer}`));
        else resolve(Number(process.hrtime.bigint() - start) / 1e6);
      });
    };
    const req =
      url.protocol === "https:"
        ? https.request(url, { ...options, ...(ca === undefined ? {} : { ca }) }, onResponse)
        : http.request(url, options, onResponse);
    req.on("error", reject);
    req.end(body);
  });
}

/** A small LCG, so a run's schedule can be repeated from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

async function load(job: LoadJob, ca: Buffer | undefined): Promise<object> {
  const next = random(job.seed);
  const latencies: number[] = [];
  const errors: string[] = [];
  const start = Date.now();
  const end = start + job.durationMs;
  const session = async (harness: string, id: string) => {
    let due = start - Math.log(1 - next()) * (1000 / job.rate);
    for (let n = 0; ; n++) {
      await sleep(due - Date.now());
      if (Date.now() >= end) return;
      const call = payloads(job.repo, id, n);
      for (const body of [call.PreToolUse, call.PostToolUse]) {
        try {
          latencies.push(await post(job, ca, harness, body));
        } catch (e) {
          if (errors.length < 20) errors.push(String(e));
          else errors.push("");
        }
      }
      due += -Math.log(1 - next()) * (1000 / job.rate);
    }
  };
  await Promise.all(
    job.machines.flatMap((m) =>
      Array.from({ length: job.sessionsPerMachine }, (_, s) => session(m, `${m}-s${s}`)),
    ),
  );
  const cpu = process.cpuUsage();
  return {
    latencies,
    errors: errors.length,
    firstErrors: errors.filter((e) => e !== "").slice(0, 5),
    elapsedMs: Date.now() - start,
    clientCpuMs: (cpu.user + cpu.system) / 1000,
  };
}

async function rounds(job: RoundsJob, ca: Buffer | undefined, lines: AsyncIterator<string>): Promise<void> {
  for (;;) {
    const line = await lines.next();
    if (line.done === true || line.value === "") return;
    const [kind, n] = line.value.split(" ");
    const call = payloads(job.repo, job.session, Number(n));
    const ms = await post(job, ca, job.harness, kind === "pre" ? call.PreToolUse : call.PostToolUse);
    process.stdout.write(`${JSON.stringify({ ms })}\n`);
  }
}

async function main(): Promise<void> {
  const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const first = await lines.next();
  const job = JSON.parse(first.value as string) as LoadJob | RoundsJob;
  const ca = job.ca === undefined ? undefined : fs.readFileSync(job.ca);
  if (job.mode === "rounds") await rounds(job, ca, lines);
  else process.stdout.write(`${JSON.stringify(await load(job, ca))}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`fleet-client: ${String(e)}\n`);
  process.exit(1);
});
