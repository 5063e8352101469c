import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadRuleFileBytes } from "../../../src/core/load-rule.js";
import { assembleRuleSet } from "../../../src/core/rule-set.js";
import { loadStarterPack } from "../../../src/core/starter-pack.js";
import { lintRuleFiles } from "../../../src/shell/lint/rule-files.js";
import { runs } from "../../property-runs.js";

const WHENS = [
  'event.type == "closed" && event.outcome == "failed"',
  'count({"type": "closed", "harness": event.harness}, duration("1h")) >= 3',
  'count({"path": event.path}, duration("1h")) >',
  "event.outcom == 1",
  "event.exit_code + 1",
  'count({"type": "closed"}, duration(event.tool)) > 1',
  'count({"nope": "x"}, duration("1h")) > 1',
  'distinct("run", {"type": "tool"}, duration("8d")) > 1',
  Array.from({ length: 16 }, (_, i) => `event.paths.exists(p, p.startsWith("d${i}/"))`).join(" || "),
  "[1, 2].all(x, [3].all(y, [4].all(z, x < y + z)))",
  'event.type == "tick" && timestamp("2026-09-27T00:00:00Z") < now',
  "true",
];

/** Mostly one of the valid spellings, now and then a broken one. */
const either = (valid: readonly string[], broken: readonly string[]) =>
  fc.oneof(
    { arbitrary: fc.constantFrom(...valid), weight: 8 },
    { arbitrary: fc.constantFrom(...broken), weight: 1 },
  );

/** Each key's value, as a TOML value: valid spellings and broken ones. */
const fields = (name: string) =>
  fc.record({
    name: either([JSON.stringify(name)], [JSON.stringify(`${name}-other`), '"Bad Name"', "7"]),
    description: either(['"A rule"'], [JSON.stringify("two\nlines"), JSON.stringify("x".repeat(201))]),
    on: either(['"run_event"', '"run_event"', '"run_event"', '"graph_event"', '"tick"'], ['"runs"']),
    // Evenly: valid whens, and each way a when fails to compile or costs too much.
    when: fc.constantFrom(...WHENS.map((w) => JSON.stringify(w)), `'''\nevent.type ==\n  "tool"\n'''`),
    level: either(['"annotate"', '"notify"', '"hold"', '"stop"'], ['"page"']),
    cooldown: either(['"30m"', '"1h"'], ['"30s"', '"8d"', "60"]),
    target: either(['"run"', '"harness"', '"node"', '"fleet"'], ['"team"']),
    message: either(['"{{harness}} {{rule}}"'], ['"{{harness}} said {{summary}}"']),
    action: fc.constant('"restart"'),
  });

const KEYS = ["name", "description", "on", "when", "level", "cooldown", "target", "message"] as const;
/** Most keys present most of the time, so valid files are common; an unknown key now and then. */
const present = fc.integer({ min: 0, max: 19 }).map((n) => n > 0);

const file = (name: string) =>
  fc
    .tuple(
      fields(name),
      fc.tuple(...KEYS.map(() => present)),
      fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
      fc.option(fc.string({ maxLength: 12 }), { nil: undefined, freq: 8 }),
    )
    .map(([f, keep, extra, junk]) => {
      const lines = KEYS.filter((_, i) => keep[i]).map((k) => `${k} = ${f[k]}`);
      if (extra) lines.push(`action = ${f.action}`);
      if (junk !== undefined) lines.splice(1, 0, junk);
      return lines.join("\n");
    });

/** A file of each kind the generator may reach only rarely, so every run covers them. */
const valid = [
  'name = "a"',
  'description = "A rule"',
  'on = "run_event"',
  `when = ${JSON.stringify(WHENS[0])}`,
  'level = "notify"',
  'target = "harness"',
  'message = "{{harness}}"',
].join("\n");
const costly = valid
  .replace('name = "a"', 'name = "churn"')
  .replace(/^when = .*$/m, `when = ${JSON.stringify(WHENS[8])}`);

const DISABLE_REASONS = new Set(["schema", "compile", "cost_estimate", "duplicate_name"]);

describe("lint and the loader", () => {
  it("give every generated rule file the same verdict and reason", () => {
    const starter = loadStarterPack();
    const seen = new Set<string>();
    const checkouts = fc
      .uniqueArray(fc.constantFrom("churn", "a", "b-2", "same-file-collision", "loop-stop-recurs"), {
        minLength: 1,
        maxLength: 4,
      })
      .chain((names) => fc.tuple(...names.map((n) => file(n).map((text) => [n, text] as const))));
    fc.assert(
      fc.property(checkouts, (files) => {
        const inputs = files.map(([n, text]) => ({
          file: `rules/${n}.toml`,
          bytes: new TextEncoder().encode(text),
        }));
        const set = assembleRuleSet({
          starter,
          policy: [{ repo: "ops", loads: inputs.map((i) => loadRuleFileBytes(i.file, i.bytes)) }],
          shadowPeriod: 0,
        });
        const lint = lintRuleFiles(inputs);
        for (const { file } of inputs) {
          const daemon =
            set.disabled.find((d) => d.file === file && d.source.kind === "policy")?.reason ?? "loads";
          const errors = lint.findings.filter((f) => f.file === file && f.severity === "error");
          const verdict = errors.find((f) => DISABLE_REASONS.has(f.reason))?.reason ?? "loads";
          expect(verdict, file).toBe(daemon);
          seen.add(daemon);
          expect(errors.length, file).toBe(daemon === "loads" ? 0 : 1);
          if (daemon === "loads") expect(set.rules.some((r) => r.rule.spec.file === file)).toBe(true);
          const problem = set.disabled.find((d) => d.file === file);
          if (problem !== undefined) expect(errors[0]?.message).toBe(problem.message);
        }
      }),
      { numRuns: runs(150), examples: [[[["churn", costly]]], [[["a", valid]]]] },
    );
    // The generator reaches loaded files and each way the loader disables one.
    expect([...seen].sort()).toEqual(["compile", "cost_estimate", "loads", "schema"]);
  });
});
