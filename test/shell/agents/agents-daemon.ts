/**
 * A real daemon in this process for the agents tests (issue 17): `DaemonApp.start` as `harness daemon`
 * runs it, on a `TestFleet`'s temporary XDG tree, config and producer credentials, with extra policy
 * rules. A producer's rows go in through `JournalService.Append` on the socket with each source's
 * credential; a hook-fed run's rows through the admission the hook ingest calls, marked hook-fed; a hook
 * call is `app.runVerdicts.check`, the call the ingest endpoint makes in the daemon's process;
 * `CheckRun` goes over the socket.
 */

import * as path from "node:path";
import type { JsonObject } from "@bufbuild/protobuf";
import { loadRuleFile } from "../../../src/core/load-rule.js";
import { assembleRuleSet } from "../../../src/core/rule-set.js";
import type { ProducerSource } from "../../../src/core/sources.js";
import { loadStarterPack } from "../../../src/core/starter-pack.js";
import type { AdapterRegistry } from "../../../src/shell/agents/adapters/registry.js";
import { DaemonApp } from "../../../src/shell/app/daemon-app.js";
import { agentClient, journalClient } from "../../../src/shell/rpc/client.js";
import { readTokenFile } from "../../../src/shell/rpc/credentials.js";
import type { Db } from "../../../src/shell/store/open-store.js";
import { createLog } from "../../../src/shell/support/log.js";
import { derivedCursors, journalRows, lastRow } from "../../support/store-reads.js";
import { type FleetOptions, TestFleet } from "../daemon-harness.js";

export const REPO = "forge.example/org/reduit";

export interface AgentsDaemonOptions extends FleetOptions {
  readonly clock?: () => number;
  readonly tickMs?: number;
  /** The agents the hook endpoint serves, when a test registers one of its own. */
  readonly agents?: AdapterRegistry;
}

export class AgentsDaemon {
  private constructor(
    readonly fleet: TestFleet,
    readonly app: DaemonApp,
  ) {}

  static async start(options: AgentsDaemonOptions = {}): Promise<AgentsDaemon> {
    const fleet = new TestFleet(options);
    const loads = (options.rules ?? []).map((r) => loadRuleFile(`rules/${r.name}.toml`, r.text));
    try {
      const app = await DaemonApp.start({
        env: fleet.env,
        configPath: path.join(fleet.root, "config", "harness", "harness.toml"),
        log: createLog({ level: "silent" }),
        ...(options.clock === undefined ? {} : { clock: options.clock }),
        ...(options.tickMs === undefined ? {} : { tickMs: options.tickMs }),
        ...(options.agents === undefined ? {} : { agents: options.agents }),
        loadRules: (config) => {
          const { enforce, disable, shadowPeriod } = config.memory.rules;
          return assembleRuleSet({
            starter: loadStarterPack(),
            policy: [{ repo: "test", loads }],
            enforce,
            disable,
            shadowPeriod,
          });
        },
      });
      return new AgentsDaemon(fleet, app);
    } catch (e) {
      await fleet.dispose();
      throw e;
    }
  }

  /** Appends `events` (run_event unless they say `kind`) with `source`'s credential; the seqs. */
  async append(source: ProducerSource, events: readonly Record<string, unknown>[]): Promise<number[]> {
    const token = await readTokenFile(this.fleet.tokens.get(source) as string);
    const r = await journalClient({ socketPath: this.fleet.socketPath }, token).append({
      events: events.map(({ kind, ...event }) => ({
        kind: typeof kind === "string" ? kind : "run_event",
        event: event as JsonObject,
      })),
    });
    return r.results.map((x) => {
      if (x.result.case !== "admitted") throw new Error(`not admitted: ${JSON.stringify(x.result.value)}`);
      return Number(x.result.value.seq);
    });
  }

  /**
   * Appends `events` with `source` as the hook ingest admits its rows: through the daemon's admission,
   * marked hook-fed (`core/hook-runs.ts`); the seqs.
   */
  async hookRows(source: ProducerSource, events: readonly Record<string, unknown>[]): Promise<number[]> {
    const wires = events.map((e) => ({ kind: "run_event", ...e }));
    const results = await this.app.daemon.admit(source, wires, undefined, { hookFed: true });
    return results.map((x) => {
      if (x.kind !== "admitted") throw new Error(`not admitted: ${JSON.stringify(x)}`);
      return x.seq;
    });
  }

  /** What a hook call of the run gets (the ingest endpoint's call). */
  check(harness: string, run: string) {
    return this.app.runVerdicts.check(harness, run);
  }

  checkRun(harness: string, run: string) {
    return agentClient({ socketPath: this.fleet.socketPath }).checkRun({ harness, run });
  }

  /** The daemon's own store connection, for the test's reads (`test/support/store-reads.ts`). */
  get db(): Db {
    return this.app.store.db;
  }

  /** Every row of `type` (run_event unless `kind` says), its event parsed, in seq order. */
  rows(type: string, kind = "run_event"): (Record<string, unknown> & { seq: number; source: string })[] {
    return journalRows(this, { kind, type }).map((r) => ({ ...r.event, seq: r.seq, source: r.source }));
  }

  /** Waits until the evaluator and the derivers have passed every row. */
  async settled(): Promise<void> {
    await this.until(() => {
      const head = lastRow(this).seq;
      const cursors = derivedCursors(this);
      return this.app.daemon.view.cursor === head && cursors.length === 5 && cursors.every((c) => c === head);
    }, "the evaluator and the derivers to pass every row");
  }

  async until(done: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
    const start = Date.now();
    while (!(await done())) {
      if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async dispose(): Promise<void> {
    await this.app.close();
    await this.fleet.dispose();
  }
}

/** Rows as a Claude Code hook's ingest writes them: `run` `<harness>#<session>`, adapter claude-code. */
export const session = (harness: string, id: string) => {
  const base = { harness, run: `${harness}#${id}`, adapter: "claude-code", session: id };
  return {
    run: base.run,
    opened: () => ({ type: "opened", ...base, trigger: "startup", repo: REPO, branch: "main" }),
    closed: (outcome = "success", reason = "") => ({ type: "closed", ...base, outcome, reason }),
    tool: (fields: Record<string, unknown>) => ({
      type: "tool",
      ...base,
      repo: REPO,
      branch: "main",
      tool: "Bash",
      action: "exec",
      is_error: false,
      digest: "0".repeat(64),
      ...fields,
    }),
    edit: (...paths: string[]) => ({
      type: "tool",
      ...base,
      repo: REPO,
      branch: "main",
      tool: "Edit",
      action: "edit",
      is_error: false,
      digest: paths.join(",").padEnd(64, "e").slice(0, 64),
      paths,
    }),
    mark: (mark: string) => ({ type: "mark", ...base, mark }),
  };
};
