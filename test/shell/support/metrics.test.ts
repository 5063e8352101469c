/**
 * REQ-20's metrics: the `rule` label cap, and "A silent evaluator is visible" against a real daemon
 * whose evaluator falls behind the journal.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { DaemonApp } from "../../../src/shell/app/daemon-app.js";
import { journalClient } from "../../../src/shell/rpc/client.js";
import { createLog } from "../../../src/shell/support/log.js";
import { DaemonMetrics, OTHER, RULE_LABEL_CAP } from "../../../src/shell/support/metrics.js";
import { evaluatorCaughtUp } from "../../support/store-reads.js";
import { TestFleet } from "../daemon-harness.js";

describe("the rule label", () => {
  it("keeps 100 rule names and folds every later one into __other__", async () => {
    const m = new DaemonMetrics();
    for (let i = 0; i < RULE_LABEL_CAP + 20; i++)
      m.evaluations.inc({ rule: m.rule(`rule-${String(i).padStart(3, "0")}`), result: "false" });
    m.evaluations.inc({ rule: m.rule("rule-007"), result: "fired" });
    const values = (await m.evaluations.get()).values;
    const rules = new Set(values.map((v) => v.labels.rule));
    expect(rules.size).toBe(RULE_LABEL_CAP + 1);
    expect(values.find((v) => v.labels.rule === OTHER && v.labels.result === "false")?.value).toBe(20);
    // A name seen before the cap keeps its own label after it.
    expect(values.find((v) => v.labels.rule === "rule-007" && v.labels.result === "fired")?.value).toBe(1);
  });
});

describe("evaluation counts", () => {
  it("reach the counter at a flush, added once per rule and result, under the label cap", async () => {
    const m = new DaemonMetrics();
    for (let row = 0; row < 3; row++)
      for (let i = 0; i < RULE_LABEL_CAP + 5; i++)
        m.countEvaluation(`rule-${String(i).padStart(3, "0")}`, "false");
    m.countEvaluation("rule-001", "suppressed");
    expect((await m.evaluations.get()).values).toEqual([]);
    m.flushEvaluations();
    const values = (await m.evaluations.get()).values;
    const value = (rule: string, result: string) =>
      values.find((v) => v.labels.rule === rule && v.labels.result === result)?.value;
    expect(value("rule-000", "false")).toBe(3);
    expect(value("rule-001", "suppressed")).toBe(1);
    expect(value(OTHER, "false")).toBe(15);
    // A second flush adds nothing more: the counts were handed over.
    m.flushEvaluations();
    expect((await m.evaluations.get()).values.find((v) => v.labels.rule === "rule-000")?.value).toBe(3);
  });
});

/** A rule near the 5,000-unit estimate that every tool row pays in full, so evaluation is slower than admission. */
const heavy = (n: number) => {
  const list = Array.from({ length: 16 }, (_, i) => i + 1).join(", ");
  return {
    name: `heavy-${n}`,
    text: `name = "heavy-${n}"
description = "costs most of the limit on every tool call"
on = "run_event"
when = '[${list}].map(x, [${list}].filter(y, y < x).size()).size() == 0 && event.type == "tool"'
level = "notify"
target = "run"
message = "{{run}}"
`,
  };
};

const lagOf = (text: string): number => {
  const m = /^harness_rule_journal_lag_seconds (\S+)$/m.exec(text);
  if (m === null) throw new Error(`no lag gauge in\n${text}`);
  return Number(m[1]);
};

describe("a daemon whose evaluator falls behind", () => {
  it("A silent evaluator is visible", async () => {
    const fleet = new TestFleet({ rules: Array.from({ length: 8 }, (_, i) => heavy(i)) });
    try {
      await fleet.start();
      const url = /metrics (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(fleet.daemonStderr)?.[1];
      if (url === undefined) throw new Error(`no metrics address in ${fleet.daemonStderr}`);
      const token = fs.readFileSync(fleet.tokens.get("observer") as string, "utf8").trim();
      const client = journalClient({ socketPath: fleet.socketPath }, token);
      const event = (i: number) => ({
        kind: "run_event",
        event: { type: "tool", harness: "impl", run: `impl#${i % 50}`, action: "read" },
      });
      // Rows keep being journaled, faster than eight heavy rules can evaluate them.
      const seen: { lag: number; behind: boolean }[] = [];
      const appending = (async () => {
        for (let b = 0; b < 30; b++)
          await client.append({
            events: Array.from({ length: 1_000 }, (_, i) => event(b * 1_000 + i)),
          });
      })();
      let done = false;
      void appending.finally(() => {
        done = true;
      });
      while (!done) {
        const lag = lagOf(await (await fetch(url)).text());
        seen.push({ lag, behind: !evaluatorCaughtUp(fleet) });
        await new Promise((r) => setTimeout(r, 200));
      }
      await appending;
      // The gauge rose while the journal ran ahead of the evaluator, instead of fires quietly stopping.
      const behind = seen.filter((s) => s.behind);
      expect(behind.length, JSON.stringify(seen)).toBeGreaterThan(0);
      expect(Math.max(...behind.map((s) => s.lag)), JSON.stringify(seen)).toBeGreaterThan(1);
      const rising = behind.map((s) => s.lag);
      expect(rising.at(-1), JSON.stringify(seen)).toBeGreaterThan(rising[0] as number);
    } finally {
      await fleet.dispose();
    }
  }, 120_000);
});

describe("a metrics listener with a token", () => {
  it("answers only a scraper presenting the bearer token", async () => {
    const fleet = new TestFleet({ noConfig: true });
    try {
      const tokenFile = path.join(fleet.root, "metrics.token");
      const token = `scrape-${"m".repeat(40)}`;
      fs.writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
      const configPath = path.join(fleet.root, "harness.toml");
      fs.writeFileSync(
        configPath,
        `[server]\nmetrics_listen = "127.0.0.1:0"\nmetrics_token_file = ${JSON.stringify(tokenFile)}\n[agents]\nlisten = ""\n`,
      );
      const daemon = await DaemonApp.start({
        env: fleet.env,
        configPath,
        log: createLog({ level: "silent" }),
      });
      try {
        const url = daemon.metricsUrl as string;
        const bare = await fetch(url);
        expect(bare.status).toBe(401);
        expect(bare.headers.get("www-authenticate")).toMatch(/^Bearer /);
        expect((await fetch(url, { headers: { Authorization: `Bearer ${"x".repeat(46)}` } })).status).toBe(
          401,
        );
        const ok = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
        expect(ok.status).toBe(200);
        expect(await ok.text()).toContain("harness_rule_journal_lag_seconds");
      } finally {
        await daemon.close();
      }
    } finally {
      await fleet.dispose();
    }
  });
});
