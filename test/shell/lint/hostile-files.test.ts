import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  MAX_RULE_FILE_BYTES,
  MAX_RULE_FILES_PER_REPO,
  ruleFilePastLimit,
} from "../../../src/core/rule-file-bytes.js";
import { checkout, lintJson, ruleText } from "./checkout-fixture.js";

/** Lints the hostile file beside a good rule: the hostile one gets one clear error, the good one none. */
function beside(hostile: string | Uint8Array) {
  const { exitCode, findings } = lintJson(
    checkout({ "rules/hostile.toml": hostile, "rules/good.toml": ruleText("good") }),
  );
  expect(exitCode).toBe(1);
  expect(findings.filter((f) => f.file === "rules/good.toml")).toEqual([]);
  const mine = findings.filter((f) => f.file === "rules/hostile.toml");
  expect(mine).toHaveLength(1);
  expect(mine[0]).toMatchObject({ severity: "error", reason: "schema" });
  return mine[0] as (typeof findings)[number];
}

describe("hostile rule files", () => {
  it("deeply nested TOML", () => {
    const f = beside(`${ruleText("hostile")}x = ${"[".repeat(100_000)}${"]".repeat(100_000)}\n`);
    expect(f.message).toMatch(/^invalid TOML: .*nested/);
  });

  it("10,000 dotted keys", () => {
    const text = `${ruleText("hostile")}${Array.from({ length: 10_000 }, (_, i) => `extra.k${i} = ${i}`).join("\n")}\n`;
    expect(beside(text)).toMatchObject({ line: 8, column: 1, message: "unknown key extra" });
    const deep = `${ruleText("hostile")}${Array.from({ length: 10_000 }, (_, i) => `k${i}`).join(".")} = 1\n`;
    expect(beside(deep).message).toMatch(/^invalid TOML: .*nested|^unknown key k0$/);
  });

  it("a 10 MB file is refused before it is parsed", () => {
    const f = beside(`${ruleText("hostile")}# ${"x".repeat(10 * 1024 * 1024)}\n`);
    expect(f).toMatchObject({
      line: 1,
      column: 1,
      message: `the file is larger than ${MAX_RULE_FILE_BYTES / 1024} KiB, the limit for a rule file`,
    });
  });

  it("duplicate keys", () => {
    const f = beside(`${ruleText("hostile")}level = "stop"\n`);
    expect(f).toMatchObject({ line: 8 });
    expect(f.message).toMatch(/^invalid TOML: .*(already|overwrite|defined)/i);
  });

  it("__proto__ keys", () => {
    const f = beside(`${ruleText("hostile")}__proto__ = { polluted = true }\n`);
    expect(f).toMatchObject({ line: 8, column: 1, message: "unknown key __proto__" });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const table = beside(`${ruleText("hostile")}[constructor.prototype]\npolluted = true\n`);
    expect(table.message).toBe("unknown key constructor");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("invalid UTF-8", () => {
    const bytes = Buffer.concat([Buffer.from(ruleText("hostile")), Buffer.from([0x23, 0xff, 0xfe, 0x0a])]);
    expect(beside(bytes)).toMatchObject({ line: 1, column: 1, message: "the file is not valid UTF-8" });
  });

  it("100,000 files in rules/", { timeout: 180_000 }, () => {
    const dir = checkout({ "rules/good.toml": ruleText("good") });
    const broken = 'name = "x"\n';
    for (let i = 0; i < 100_000; i++) writeFileSync(join(dir, "rules", `r${i}.toml`), broken);
    mkdirSync(join(dir, "rules", "nested"));
    const { exitCode, findings } = lintJson(dir);
    expect(exitCode).toBe(1);
    const errors = findings.filter((f) => f.severity === "error");
    expect(errors).toHaveLength(100_000);
    expect(new Set(errors.map((f) => f.file)).size).toBe(100_000);
    expect(errors.every((f) => f.reason === "schema")).toBe(true);
    // The first 1,000 rule files by name (good.toml among them) are read, as the daemon reads a clone's;
    // the rest are refused unread with the loader's reason.
    const missing = errors.filter((f) => f.message === "missing required key description");
    expect(missing).toHaveLength(MAX_RULE_FILES_PER_REPO - 1);
    expect(errors.filter((f) => f.message === ruleFilePastLimit(f.file).message)).toHaveLength(
      100_000 - (MAX_RULE_FILES_PER_REPO - 1),
    );
    expect(findings.filter((f) => f.file === "rules/good.toml")).toEqual([]);
  });
});
