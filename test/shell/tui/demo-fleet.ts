/**
 * A real daemon driven by the demo's simulated fleet, for the TUI's end-to-end tests: `TestFleet` (a
 * `harness daemon` process) enforcing the demo's hold rule, with two policy rules in their shadow week,
 * and `simulateFleet` run against it through the reference supervisor and the producers' credentials,
 * as `harness demo` runs it. Before the fleet, the store is given what an older store may hold and
 * admission now refuses: two rows of a harness whose name carries escape sequences, which the
 * enforced rule fires on and holds.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import Database from "better-sqlite3";
import type { ProducerSource } from "../../../src/core/sources.js";
import { DEMO_ENFORCE } from "../../../src/shell/demo/demo.js";
import { FLEET, simulateFleet } from "../../../src/shell/demo/fleet-sim.js";
import { ruleClient } from "../../../src/shell/rpc/client.js";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import { FleetJournal } from "../../../src/shell/supervisor/fleet-journal.js";
import { ReferenceSupervisor } from "../../../src/shell/supervisor/reference-supervisor.js";
import { evaluatorCursor, holds } from "../../support/store-reads.js";
import { TestFleet } from "../daemon-harness.js";

/** A harness name with a CSI (clear screen, red) and an OSC (window title) in it. */
export const ESC_HARNESS = "evil\u001b[2J\u001b[31mred\u001b]0;owned\u0007";

/** A policy rule the demo fleet fires: in its shadow week it records shadow fires and acts on none. */
export const SHADOW_RULE = {
  name: "verify-failure-seen",
  text: `name = "verify-failure-seen"
description = "A run's verify step failed; tell the operator (a policy rule in its shadow week)."
on = "run_event"
when = 'event.type == "tool" && event.action == "verify" && event.is_error'
level = "notify"
cooldown = "1m"
target = "run"
message = "{{run}} failed a verify step"
`,
};

/** Fires once per run on a probe tool call: the burst test's distinct targets. */
export const BURST_RULE = {
  name: "burst-probe",
  text: `name = "burst-probe"
description = "The burst test's probe: fires on every probe call, one target per run."
on = "run_event"
when = 'event.type == "tool" && event.tool == "burst-probe"'
level = "annotate"
cooldown = "1h"
target = "run"
message = "probe {{run}}"
`,
};

export function tokensOf(f: TestFleet): Partial<Record<ProducerSource, string>> {
  return Object.fromEntries([...f.tokens].map(([s, file]) => [s, fs.readFileSync(file, "utf8").trim()]));
}

/** The evaluator's cursor, read from the store. */
export const cursorOf = (f: TestFleet): number => evaluatorCursor(f);

/** Writes two over-budget closes of ESC_HARNESS straight into the stopped daemon's store. */
function olderStoreRows(storePath: string): void {
  const db = new Database(storePath);
  try {
    const journal = new JournalTable(db);
    const now = Date.now();
    db.transaction(() => {
      for (const n of [1, 2])
        journal.append({
          kind: "run_event",
          at: now,
          source: "ledger",
          event: {
            type: "closed",
            at: now,
            harness: ESC_HARNESS,
            run: `${ESC_HARNESS}#${n}`,
            outcome: "budget_exceeded",
          },
        } as Parameters<JournalTable["append"]>[0]);
    })();
  } finally {
    db.close();
  }
}

/** Starts the daemon, runs the demo fleet through it (about `seconds`), and leaves the daemon running. */
export async function demoFleet(seconds = 3): Promise<TestFleet> {
  const f = new TestFleet({
    enforce: [...DEMO_ENFORCE],
    rules: [SHADOW_RULE, BURST_RULE],
    shadowPeriod: "7d",
  });
  await f.start();
  await f.stop();
  olderStoreRows(f.storePath);
  await f.start();
  await f.until(() => holds(f).length > 0, "the escaped harness's hold");
  await runDemoFleet(f, seconds);
  return f;
}

/**
 * Runs `harness demo`'s fleet (seed 29, `seconds` of simulated time) through the started daemon `f`, as
 * `harness demo` does, and waits for the evaluator to catch up with every row it appended.
 */
export async function runDemoFleet(f: TestFleet, seconds: number): Promise<void> {
  const journal = new FleetJournal(f.socketPath, tokensOf(f));
  const supervisor = await ReferenceSupervisor.start({
    journal,
    rules: ruleClient({ socketPath: f.socketPath }),
    socketPath: path.join(f.root, "run", "supervisor.sock"),
  });
  for (const spec of FLEET) supervisor.define(spec);
  const settle = () => f.until(() => cursorOf(f) >= journal.lastSeq, "the evaluator to catch up");
  try {
    await simulateFleet({
      supervisor,
      observer: journal.producer("observer"),
      graph: journal.producer("graph"),
      seed: 29,
      durationMs: seconds * 1000,
      settle,
      clearHold: async (harness) => {
        const r = await f.cli(["rules", "clear", harness]);
        if (r.code !== 0) throw new Error(`harness rules clear ${harness}: ${r.stderr}`);
      },
    });
    await settle();
  } finally {
    await supervisor.shutdown();
  }
}
