/**
 * A simulated fleet for `harness demo`: five harnesses working on one repository, driven through the
 * reference supervisor (spawns, exits, restarts, the schedule, the loop guard) and the other producers
 * (the observer's tool calls and marks, the graph's edits and collisions), all through the daemon's
 * ingestion API with each producer's own credential. One script, in a realistic order, so that every
 * starter rule has something to find:
 *
 * - impl fails the same `go test` in two runs (repeated-verify-failure) and, with review and worker,
 *   edits internal/ledger/writer.go in four runs (cross-run-churn); review's edit while impl's run is in
 *   flight starts a file collision (same-file-collision);
 * - triage dies three times on the same error and is restarted into it (restart-into-same-failure,
 *   declared hold but not enforced, so it only notifies and the fourth restart still spawns);
 * - nightly exceeds its budget twice (budget-exhaustion-recurring, which the demo enforces): it is
 *   held, its next firings are skipped with reason rule_hold, `harness start nightly` is refused, and
 *   `harness rules clear nightly` lets the one after run;
 * - worker falls into a tool loop twice and the loop guard stops it each time (loop-stop-recurs).
 *
 * Deterministic: the seed chooses which files the agents browse and how long each pause lasts, and the
 * script waits for the rules engine (`settle`) before each scheduled firing and operator command, so a
 * run of the demo tells the same story every time. A real supervisor never waits for the rules engine;
 * the demo does so that a hold placed a moment ago is certain to be there when the schedule fires.
 *
 * Time is compressed: the journal's `at` is the daemon's admission clock, so a whole day of fleet cannot
 * be waited for; but the starter rules count rows inside windows of admission time (1h, 2h, 24h), and
 * rows sent within a minute are inside every one of them.
 */
import { createHash } from "node:crypto";
import type { JsonValue } from "@bufbuild/protobuf";
import { LOOP_THRESHOLD } from "../../core/loop-guard.js";
import { fileNode, runNode } from "../../core/targets.js";
import { HoldRefusal } from "../supervisor/errors.js";
import type { JournalProducer, ProducedEvent } from "../supervisor/fleet-journal.js";
import type { ReferenceSupervisor } from "../supervisor/reference-supervisor.js";
import type { Exit, HarnessSpec, Run } from "../supervisor/runs.js";

export const DEMO_REPO = "forge.example/org/reduit";

export const FLEET: readonly HarnessSpec[] = [
  { name: "impl", kind: "resident", adapter: "claude", repo: DEMO_REPO, branch: "impl/ledger-batching" },
  { name: "review", kind: "resident", adapter: "claude", repo: DEMO_REPO, branch: "review/ledger-batching" },
  { name: "triage", kind: "resident", adapter: "gemini", repo: DEMO_REPO, branch: "main" },
  { name: "worker", kind: "resident", adapter: "crush", repo: DEMO_REPO, branch: "pool/worker-1" },
  { name: "nightly", kind: "scheduled", adapter: "claude", repo: DEMO_REPO, branch: "main" },
];

/** agent-trace's classification of a tool call. */
export type ToolAction = "search" | "read" | "edit" | "exec" | "verify" | "other";

export interface ToolCall {
  readonly tool: string;
  readonly action: ToolAction;
  /** The call's input: its digest is what the loop guard and the verify rule compare. */
  readonly input: { readonly [key: string]: JsonValue };
  readonly paths?: readonly string[];
  readonly isError?: boolean;
}

function canonical(v: JsonValue): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v !== null && typeof v === "object")
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k] as JsonValue)}`)
      .join(",")}}`;
  return JSON.stringify(v);
}

/** The classifier's input digest: hex SHA-256 of the input as JSON with sorted keys. */
export const inputDigest = (input: ToolCall["input"]): string =>
  createHash("sha256").update(canonical(input), "utf8").digest("hex");

const runFields = (run: Run) => ({
  harness: run.harness.name,
  run: run.id,
  adapter: run.harness.adapter,
  repo: run.harness.repo,
  branch: run.harness.branch,
  session: run.session,
});

/** The observer's `tool` row for one call of `run`; `at` (the source's own time) defaults to now. */
export function toolEvent(run: Run, call: ToolCall, at?: string): ProducedEvent {
  return {
    kind: "run_event",
    type: "tool",
    ...runFields(run),
    tool: call.tool,
    action: call.action,
    is_error: call.isError === true,
    digest: inputDigest(call.input),
    ...(call.paths === undefined ? {} : { paths: [...call.paths] }),
    ...(at === undefined ? {} : { at }),
  };
}

/** A small, fast, seedable PRNG (mulberry32): the same seed, the same fleet. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The file four runs edit (cross-run-churn) and two edit at once (same-file-collision). */
const HOT_FILE = "internal/ledger/writer.go";
const BROWSED = [
  "internal/ledger/writer_test.go",
  "internal/ledger/batch.go",
  "internal/ledger/record.go",
  "internal/store/store.go",
  "cmd/reduit/main.go",
  "docs/ledger.md",
] as const;
const GREPS = ["BatchWriter", "func Flush", "ErrLedgerClosed", "maxBatch", "fsync"] as const;
const LEDGER_TESTS = "go test ./internal/ledger/...";
const MIGRATE = "go run ./cmd/migrate -up";
const DB_DOWN = "Error: dial tcp 127.0.0.1:5432: connect: connection refused";
const TEST_FAILED = "--- FAIL: TestBatchWriterFlush (0.01s)";
const OUT_OF_BUDGET = "budget exceeded: spent 2.00 of 2.00 USD";
/** The call worker repeats: one comment, posted again and again. */
const LOOPING_CALL: ToolCall = {
  tool: "Bash",
  action: "exec",
  input: { command: "gh issue comment 118 --repo org/reduit --body-file notes/118.md" },
};

/**
 * Pauses in the script, in beats: `durationMs / SCRIPT_BEATS` is one beat, so the script takes about
 * `durationMs` plus the time the daemon takes to answer.
 */
export const SCRIPT_BEATS = 64;

export interface FleetOptions {
  readonly supervisor: ReferenceSupervisor;
  readonly observer: JournalProducer;
  readonly graph: JournalProducer;
  readonly seed: number;
  /** About how long the script's pauses add up to. */
  readonly durationMs: number;
  /** Resolves once the rules engine has evaluated every row admitted so far. */
  readonly settle: () => Promise<void>;
  /** The operator's `harness rules clear <harness>`. */
  readonly clearHold: (harness: string) => Promise<void>;
  /** The operator's commands, as the script runs them (`harness start nightly`). */
  readonly onOperator?: (command: string) => void;
  readonly signal?: AbortSignal;
  /**
   * Appended to every harness name of the script (`impl` → `impl-r2`): each round of a fleet left
   * running tells the same story to harnesses with no history, so holds and cooldowns bite as in the first.
   */
  readonly harnessSuffix?: string;
}

export interface FleetReport {
  /** Scheduled firings skipped with reason rule_hold. */
  readonly firingsSkipped: number;
  /** Operator commands (start, trigger, restart) refused by a hold. */
  readonly commandsRefused: number;
}

/** The graph's projection of the fleet's edits: `edited` edges, and file collisions between harnesses. */
class Graph {
  /** Per file node, the file and the runs in flight that edited it. */
  private readonly files = new Map<string, { readonly path: string; editors: Run[] }>();
  private readonly colliding = new Set<string>();

  constructor(private readonly producer: JournalProducer) {}

  async edited(run: Run, path: string): Promise<void> {
    const { repo, branch } = run.harness;
    const node = fileNode(repo, path);
    const base = { repo, branch, path, harness: run.harness.name, run: run.id };
    const events: ProducedEvent[] = [
      { kind: "graph_event", type: "edge_added", edge: "edited", from: runNode(run.id), to: node, ...base },
    ];
    const file = this.files.get(node) ?? { path, editors: [] };
    file.editors = [...file.editors.filter((r) => r.running && r !== run), run];
    this.files.set(node, file);
    const harnesses = [...new Set(file.editors.map((r) => r.harness.name))];
    if (harnesses.length >= 2 && !this.colliding.has(node)) {
      this.colliding.add(node);
      events.push({
        kind: "graph_event",
        type: "collision_started",
        scope: "file",
        ...base,
        harnesses,
        runs: file.editors.map((r) => r.id),
      });
    }
    await this.producer.append(events);
  }

  /** A run ended: it edits nothing any more, and a collision it kept open ends with it. */
  async ended(run: Run): Promise<void> {
    const events: ProducedEvent[] = [];
    for (const [node, file] of this.files) {
      if (!file.editors.includes(run)) continue;
      const involved = file.editors.filter((r) => r.running || r === run);
      file.editors = involved.filter((r) => r !== run);
      if (this.colliding.has(node) && new Set(file.editors.map((r) => r.harness.name)).size < 2) {
        this.colliding.delete(node);
        events.push({
          kind: "graph_event",
          type: "collision_ended",
          scope: "file",
          repo: run.harness.repo,
          branch: run.harness.branch,
          path: file.path,
          harness: run.harness.name,
          run: run.id,
          harnesses: [...new Set(involved.map((r) => r.harness.name))],
          runs: involved.map((r) => r.id),
        });
      }
    }
    if (events.length > 0) await this.producer.append(events);
  }
}

/** The fleet's `signal` aborted: the script stops at its next pause. */
export class FleetAbortedError extends Error {
  constructor() {
    super("the fleet was stopped");
    this.name = "FleetAbortedError";
  }
}

/** One simulated agent: its run's tool calls and marks, journaled by the observer. */
class Agent {
  constructor(
    private readonly fleet: Fleet,
    readonly run: Run,
  ) {}

  /** One call: journaled, shown to the loop guard, projected into the graph. False once the run is gone. */
  async call(call: ToolCall, beats = 1): Promise<boolean> {
    if (!this.run.running) return false;
    await this.fleet.options.observer.append([toolEvent(this.run, call)]);
    const tripped = await this.fleet.options.supervisor.observeTool(
      this.run,
      call.tool,
      inputDigest(call.input),
    );
    if (!tripped && call.action === "edit")
      for (const p of call.paths ?? []) await this.fleet.graph.edited(this.run, p);
    if (!this.run.running) await this.fleet.graph.ended(this.run);
    await this.fleet.pause(beats);
    return this.run.running;
  }

  async mark(mark: string): Promise<void> {
    if (!this.run.running) return;
    await this.fleet.options.observer.append([
      { kind: "run_event", type: "mark", ...runFields(this.run), mark },
    ]);
    this.fleet.options.supervisor.observeMark(this.run, mark);
  }

  read = (path: string) =>
    this.call({ tool: "Read", action: "read", input: { file_path: path }, paths: [path] });
  edit = (path: string) =>
    this.call({
      tool: "Edit",
      action: "edit",
      input: { file_path: path, old_string: "maxBatch = 64", new_string: "maxBatch = 256" },
      paths: [path],
    });
  verify = (command: string, passes: boolean) =>
    this.call({ tool: "Bash", action: "verify", input: { command }, isError: !passes });
  exec = (command: string, fails: boolean) =>
    this.call({ tool: "Bash", action: "exec", input: { command }, isError: fails });

  /** A few searches and reads of files the seed picks. */
  async browse(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      if (this.fleet.random() < 0.4) {
        const pattern = this.fleet.pick(GREPS);
        await this.call({ tool: "Grep", action: "search", input: { pattern, path: "internal/" } });
      } else await this.read(this.fleet.pick(BROWSED));
    }
  }

  /** The same call, again and again, until the loop guard stops the run. */
  async loop(): Promise<void> {
    // Bounded, in case a guard that never trips would otherwise keep the script here for ever.
    for (let i = 0; i < 2 * LOOP_THRESHOLD; i++) if (!(await this.call(LOOPING_CALL, 0.5))) return;
  }
}

class Fleet {
  readonly graph: Graph;
  readonly random: () => number;
  firingsSkipped = 0;
  commandsRefused = 0;
  private readonly beatMs: number;

  constructor(readonly options: FleetOptions) {
    this.graph = new Graph(options.graph);
    this.random = seededRandom(options.seed);
    this.beatMs = options.durationMs / SCRIPT_BEATS;
  }

  pick<T>(from: readonly T[]): T {
    return from[Math.floor(this.random() * from.length)] as T;
  }

  /** Waits about `beats` beats, the seed choosing the jitter; rejects once the fleet is stopped. */
  pause(beats: number): Promise<void> {
    const ms = beats * this.beatMs * (0.6 + 0.8 * this.random());
    const { signal } = this.options;
    if (signal?.aborted === true) return Promise.reject(new FleetAbortedError());
    return new Promise((resolve, reject) => {
      const done = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      const timer = setTimeout(done, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(new FleetAbortedError());
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  agent(run: Run): Agent {
    return new Agent(this, run);
  }

  private named(harness: string): string {
    return harness + (this.options.harnessSuffix ?? "");
  }

  operator(command: string): void {
    this.options.onOperator?.(command);
  }

  async start(harness: string): Promise<Agent | undefined> {
    await this.options.settle();
    this.operator(`harness start ${this.named(harness)}`);
    try {
      return this.agent(await this.options.supervisor.start(this.named(harness)));
    } catch (e) {
      if (!(e instanceof HoldRefusal)) throw e;
      this.commandsRefused++;
      return undefined;
    } finally {
      await this.pause(1);
    }
  }

  /** A firing of `harness`'s schedule: a new agent, or undefined when it was skipped. */
  async fire(harness: string): Promise<Agent | undefined> {
    await this.options.settle();
    const r = await this.options.supervisor.fire(this.named(harness));
    await this.pause(1);
    if (r.kind === "spawned") return this.agent(r.run);
    if (r.reason === "rule_hold") this.firingsSkipped++;
    return undefined;
  }

  /** The agent's process ends; a resident harness may come back as a new agent. */
  async exit(agent: Agent, exit: Exit): Promise<Agent | undefined> {
    const next = await this.options.supervisor.exit(agent.run, exit);
    await this.graph.ended(agent.run);
    await this.pause(1);
    return next === undefined ? undefined : this.agent(next);
  }

  async clear(harness: string): Promise<void> {
    await this.options.settle();
    this.operator(`harness rules clear ${this.named(harness)}`);
    await this.options.clearHold(this.named(harness));
    await this.pause(1);
  }
}

const required = (agent: Agent | undefined, what: string): Agent => {
  if (agent === undefined) throw new Error(`fleet script: ${what} did not spawn a run`);
  return agent;
};

/** Runs the script to its end (or until `signal` aborts, rejecting with a `FleetAbortedError`). */
export async function simulateFleet(options: FleetOptions): Promise<FleetReport> {
  const f = new Fleet(options);

  let impl = required(await f.start("impl"), "harness start impl");
  await impl.mark("user-message");
  await impl.browse(2);
  await impl.read(HOT_FILE);
  await impl.edit(HOT_FILE);
  await impl.verify(LEDGER_TESTS, false);

  const nightly1 = required(await f.fire("nightly"), "nightly's first firing");
  await nightly1.mark("user-message");
  await nightly1.browse(2);

  await impl.edit(HOT_FILE);
  await impl.verify(LEDGER_TESTS, false);
  impl = required(
    await f.exit(impl, { outcome: "failed", exitCode: 1, lastLine: TEST_FAILED }),
    "impl's restart",
  );
  await impl.mark("user-message");
  await nightly1.browse(1);
  await f.exit(nightly1, { outcome: "budget_exceeded", lastLine: OUT_OF_BUDGET });

  const review = required(await f.start("review"), "harness start review");
  await review.mark("user-message");
  await impl.read(HOT_FILE);
  await impl.edit(HOT_FILE);
  await review.browse(1);
  await review.read(HOT_FILE);
  await review.edit(HOT_FILE);
  await impl.verify(LEDGER_TESTS, false);

  let triage = await f.start("triage");
  for (let attempt = 0; attempt < 3 && triage !== undefined; attempt++) {
    await triage.mark("user-message");
    await triage.browse(1);
    await triage.exec(MIGRATE, true);
    triage = await f.exit(triage, { outcome: "failed", exitCode: 1, lastLine: DB_DOWN });
  }
  // The fourth triage run was admitted (the rule is not enforced); the database is back.
  if (triage !== undefined) {
    await triage.mark("user-message");
    await triage.exec(MIGRATE, false);
  }

  const nightly2 = required(await f.fire("nightly"), "nightly's second firing");
  await nightly2.mark("user-message");
  await nightly2.browse(3);
  await f.exit(nightly2, { outcome: "budget_exceeded", lastLine: OUT_OF_BUDGET });

  let worker = required(await f.start("worker"), "harness start worker");
  await worker.mark("user-message");
  await worker.read(HOT_FILE);
  await worker.edit(HOT_FILE);
  await worker.loop();
  await review.browse(1);

  await f.fire("nightly");
  await f.start("nightly");

  worker = required(await f.start("worker"), "harness start worker, again");
  await worker.mark("user-message");
  await worker.browse(1);
  await worker.loop();

  await f.fire("nightly");
  await f.clear("nightly");
  const nightly5 = await f.fire("nightly");
  if (nightly5 !== undefined) {
    await nightly5.mark("user-message");
    await nightly5.browse(2);
    await f.exit(nightly5, { outcome: "success", exitCode: 0 });
  }
  await impl.browse(1);
  return { firingsSkipped: f.firingsSkipped, commandsRefused: f.commandsRefused };
}
