import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  enforceEntries,
  entriesEnforce,
  formatEnforceEntry,
  parseEnforceEntry,
} from "../../src/core/enforce-entry.js";
import { loadRuleFile } from "../../src/core/load-rule.js";
import { assembleRuleSet, effectiveLevel } from "../../src/core/rule-set.js";
import { runs } from "../property-runs.js";

const H1 = "a".repeat(64);
const H2 = "0123456789abcdef".repeat(4);

describe("enforce entries: NAME and NAME@HASH", () => {
  it("a plain name is taken as written, a pin splits at its @", () => {
    expect(parseEnforceEntry("first-hold")).toEqual({
      ok: true,
      entry: { name: "first-hold", hash: undefined },
    });
    expect(parseEnforceEntry(`first-hold@${H2}`)).toEqual({
      ok: true,
      entry: { name: "first-hold", hash: H2 },
    });
  });

  it("a malformed pin is refused, saying what a pin is", () => {
    for (const bad of [
      "first-hold@",
      `@${H1}`,
      "first-hold@abc123",
      `first-hold@${H1.toUpperCase()}`,
      `first-hold@${H1}0`,
      `first-hold@${H1}@${H1}`,
      `first-hold@ ${H1}`,
    ]) {
      const r = parseEnforceEntry(bad);
      expect(r.ok, bad).toBe(false);
      if (!r.ok) expect(r.message).toContain("NAME@HASH");
    }
  });

  it("formatting and parsing an entry are inverse", () => {
    const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,62}$/);
    const hash = fc.option(fc.stringMatching(/^[0-9a-f]{64}$/), { nil: undefined });
    fc.assert(
      fc.property(name, hash, (n, h) => {
        const entry = { name: n, hash: h };
        expect(parseEnforceEntry(formatEnforceEntry(entry))).toEqual({ ok: true, entry });
      }),
      { numRuns: runs(200) },
    );
  });

  it("a name's entries enforce a hash when one is plain or pins that hash", () => {
    const entries = enforceEntries([`r@${H1}`, `r@${H2}`, "s", `s@${H1}`]);
    expect(entriesEnforce(entries.get("r"), H1)).toBe(true);
    expect(entriesEnforce(entries.get("r"), H2)).toBe(true);
    expect(entriesEnforce(entries.get("r"), "f".repeat(64))).toBe(false);
    expect(entriesEnforce(entries.get("s"), "f".repeat(64))).toBe(true);
    expect(entriesEnforce(entries.get("t"), H1)).toBe(false);
  });
});

const HOLD = (when: string) =>
  loadRuleFile(
    "rules/first-hold.toml",
    `name = "first-hold"
description = "d"
on = "run_event"
when = '${when}'
level = "hold"
target = "harness"
message = "held"
`,
  );

describe("REQ-10 with pins: the rule set", () => {
  const old = HOLD('event.type == "closed"');
  const changed = HOLD('event.type == "closed" && event.outcome == "failed"');
  if (!old.ok || !changed.ok) throw new Error("the test rules must load");
  const set = (enforce: string[], load = changed) =>
    assembleRuleSet({ starter: [], policy: [{ repo: "ops", loads: [load] }], enforce, shadowPeriod: 0 });

  it("a pin of the loaded hash enforces; a pin of another is stale, and the rule is capped at notify", () => {
    const pinned = set([`first-hold@${changed.rule.hash}`]);
    expect(pinned.rules[0]?.enforced).toBe(true);
    expect(pinned.pinned).toEqual(["first-hold"]);
    expect(pinned.stalePins).toEqual([]);

    const stale = set([`first-hold@${old.rule.hash}`]);
    expect(stale.rules[0]?.enforced).toBe(false);
    expect(stale.rules.map(effectiveLevel)).toEqual(["notify"]);
    expect(stale.stalePins).toEqual([
      { name: "first-hold", pinned: old.rule.hash, loaded: changed.rule.hash },
    ]);
    expect(stale.unknownEnforced).toEqual([]);
  });

  it("a plain name still enforces whatever the content; a pin of an unknown name is an unknown name", () => {
    const plain = set(["first-hold", `first-hold@${old.rule.hash}`]);
    expect(plain.rules[0]?.enforced).toBe(true);
    expect(plain.pinned).toEqual([]);
    expect(plain.stalePins).toEqual([]);
    expect(set([`no-such-rule@${old.rule.hash}`]).unknownEnforced).toEqual(["no-such-rule"]);
  });
});
