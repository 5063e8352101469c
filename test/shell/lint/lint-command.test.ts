import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadRuleFile } from "../../../src/core/load-rule.js";
import { checkout, lint, lintJson, ruleText } from "./checkout-fixture.js";
import { snapshot } from "./weights-fixture.js";

// Line 4 of a realistic file: the `when` whose parse fails at the end of the expression.
const CHURN = [
  'name = "churn"',
  'description = "Files edited by several runs within an hour"',
  'on = "graph_event"',
  `when='count({"path":event.path},duration("1h"))>'`,
  'level = "notify"',
  'target = "harness"',
  'message = "{{path}} churns in {{repo}}"',
  "",
].join("\n");

describe("SPEC-0029 REQ-21 lint", () => {
  it("CI rejects a rule that would not load", () => {
    const dir = checkout({ "rules/churn.toml": CHURN, "rules/ok.toml": ruleText("ok") });
    const run = lint(dir);
    expect(run.exitCode).toBe(1);
    const line = run.lines.find((l) => l.startsWith("rules/churn.toml:"));
    expect(line).toMatch(/^rules\/churn\.toml:4:49: error: compile: Syntax error: mismatched input <EOF>/);
    // Column 49 of line 4 is the closing quote: where the CEL text ends and the parse fails.
    expect([...(CHURN.split("\n")[3] as string)][48]).toBe("'");
    // The daemon's loader says the same, at the same place.
    expect(loadRuleFile("rules/churn.toml", CHURN)).toMatchObject({
      ok: false,
      problem: { reason: "compile", line: 4, column: 49 },
    });
    expect(run.lines.filter((l) => l.startsWith("rules/ok.toml:"))).toEqual([]);
  });

  it("Lint and load agree on cost", () => {
    const when = Array.from({ length: 16 }, (_, i) => `event.paths.exists(p, p.startsWith("d${i}/"))`).join(
      " || ",
    );
    const text = ruleText("costly", { when: JSON.stringify(when) });
    const loaded = loadRuleFile("rules/costly.toml", text);
    expect(loaded).toMatchObject({ ok: false, problem: { reason: "cost_estimate" } });
    expect(!loaded.ok && loaded.problem.message).toBe("estimated cost up to 6192 exceeds the limit of 5000");
    const { exitCode, findings } = lintJson(checkout({ "rules/costly.toml": text }));
    expect(exitCode).toBe(1);
    expect(findings).toEqual([
      {
        file: "rules/costly.toml",
        line: 4,
        column: 9,
        severity: "error",
        reason: "cost_estimate",
        message: "estimated cost up to 6192 exceeds the limit of 5000",
      },
    ]);
  });

  it("A hold rule warns, and strict mode fails it", () => {
    const dir = checkout({ "rules/nightly-hold.toml": ruleText("nightly-hold", { level: '"hold"' }) });
    const run = lint(dir);
    expect(run.exitCode).toBe(0);
    expect(run.lines).toEqual([
      "rules/nightly-hold.toml:5:1: warning: needs_enforce: level hold acts at hold only when nightly-hold is listed in [memory.rules] enforce; otherwise it is capped at notify",
    ]);
    expect(lint(dir, { strict: true }).exitCode).toBe(1);
    expect(lint(checkout({ "rules/quiet.toml": ruleText("quiet") }), { strict: true }).exitCode).toBe(0);
  });

  it("A tampered weights snapshot fails", () => {
    const good = snapshot();
    expect(lint(checkout({ "weights/models.toml": good })).lines).toEqual([]);
    const tampered = good.replace("coding = 0.82", "coding = 0.92");
    const { exitCode, findings } = lintJson(checkout({ "weights/models.toml": tampered }));
    expect(exitCode).toBe(1);
    expect(findings).toMatchObject([
      { file: "weights/models.toml", line: 1, column: 1, severity: "error", reason: "weights_hash" },
    ]);
    expect(findings[0]?.message).toMatch(
      /^hash mismatch: content_sha256 is [0-9a-f]{64} but the snapshot hashes to/,
    );
  });

  it("prints the same findings as JSON, sorted by file and position", () => {
    const dir = checkout({
      "rules/b.toml": ruleText("b", { level: '"stop"' }),
      "rules/a.toml": ruleText("a", { action: '"restart"' }),
    });
    const text = lint(dir);
    const { findings } = lintJson(dir);
    expect(
      findings.map((f) => `${f.file}:${f.line}:${f.column}: ${f.severity}: ${f.reason}: ${f.message}`),
    ).toEqual(text.lines);
    expect(findings.map((f) => [f.file, f.reason])).toEqual([
      ["rules/a.toml", "schema"],
      ["rules/b.toml", "needs_enforce"],
    ]);
    expect(findings[0]).toMatchObject({ line: 8, column: 1, message: "unknown key action" });
  });

  it("exits 2 when the directory cannot be read", () => {
    const run = lint(join(tmpdir(), "no-such-checkout-for-lint"));
    expect(run.exitCode).toBe(2);
    expect(run.stderr.join("\n")).toMatch(/^harness rules lint: cannot read .*no-such-checkout-for-lint/);
  });

  it("notes a rule that replaces a starter rule", () => {
    const { exitCode, findings } = lintJson(
      checkout({ "rules/same-file-collision.toml": ruleText("same-file-collision") }),
    );
    expect(exitCode).toBe(0);
    expect(findings).toMatchObject([
      {
        line: 1,
        column: 1,
        severity: "notice",
        reason: "starter_override",
        message: "replaces the embedded starter rule same-file-collision entirely",
      },
    ]);
  });

  it("notes what the daemon ignores in rules/ and lints nothing below it", () => {
    const { exitCode, findings } = lintJson(
      checkout({
        "rules/README.md": "# rules",
        "rules/drafts/broken.toml": "not toml at all [",
        "rules/ok.toml": ruleText("ok"),
      }),
    );
    expect(exitCode).toBe(0);
    expect(findings.map((f) => [f.file, f.severity, f.reason])).toEqual([
      ["rules/README.md", "notice", "ignored"],
      ["rules/drafts/", "notice", "ignored"],
    ]);
  });

  it("refuses every file under weights/ but the snapshot", () => {
    const { exitCode, findings } = lintJson(
      checkout({ "weights/models.toml": snapshot(), "weights/old/models.toml": "x" }),
    );
    expect(exitCode).toBe(1);
    expect(findings).toMatchObject([
      { file: "weights/old/models.toml", severity: "error", reason: "weights_format" },
    ]);
  });
});

describe("It needs nothing but the checkout", () => {
  const bin = new URL("../../../dist/shell/cli/main.js", import.meta.url);
  it("It needs nothing but the checkout", () => {
    expect(existsSync(bin.pathname), "npm test builds dist/ before the tests run").toBe(true);
    const dir = checkout({
      "rules/quiet.toml": ruleText("quiet"),
      "rules/nightly-hold.toml": ruleText("nightly-hold", { level: '"hold"' }),
      "weights/models.toml": snapshot(),
    });
    const home = mkdtempSync(join(tmpdir(), "lint-home-"));
    try {
      const env = {
        PATH: process.env.PATH ?? "",
        HOME: home,
        XDG_CONFIG_HOME: join(home, "config"),
        XDG_STATE_HOME: join(home, "state"),
        XDG_RUNTIME_DIR: join(home, "run"),
        // Any attempt to reach a network would go nowhere.
        http_proxy: "http://127.0.0.1:9",
        https_proxy: "http://127.0.0.1:9",
      };
      const run = spawnSync("node", [bin.pathname, "rules", "lint", dir], {
        env,
        encoding: "utf8",
        cwd: home,
      });
      expect(run.stdout).toBe(
        "rules/nightly-hold.toml:5:1: warning: needs_enforce: level hold acts at hold only when nightly-hold is listed in [memory.rules] enforce; otherwise it is capped at notify\n",
      );
      expect(run.status).toBe(0);
      const strict = spawnSync("node", [bin.pathname, "rules", "lint", "--strict", "--json", dir], {
        env,
        encoding: "utf8",
      });
      expect(strict.status).toBe(1);
      expect(JSON.parse(strict.stdout)).toHaveLength(1);
      // Nothing was created: no config, no store, no socket.
      expect(readdirSync(home)).toEqual([]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("imports no config reader, store, daemon or RPC client", () => {
    const seen = new Set<string>();
    const visit = (file: string): void => {
      // Type-only imports of generated declarations (the CEL grammar's CST) have no .ts source.
      if (seen.has(file) || !existsSync(file)) return;
      seen.add(file);
      const source = readFileSync(file, "utf8");
      for (const [, spec] of source.matchAll(/from "(\.[^"]+)"/g)) {
        visit(join(file, "..", (spec as string).replace(/\.js$/, ".ts")));
      }
    };
    visit(new URL("../../../src/shell/cli/commands/rules-lint.ts", import.meta.url).pathname);
    const shell = [...seen].map((f) => f.split("/src/")[1] as string).filter((f) => f.startsWith("shell/"));
    expect(
      shell.filter((f) => /^shell\/(store|rpc|daemon|notify)\/|global-config|paths\.ts|cli\/target/.test(f)),
    ).toEqual([]);
    expect(shell).toContain("shell/lint/lint-checkout.ts");
  });
});

describe("links in rules/", () => {
  it("warns about a symbolic link and does not follow it", () => {
    const dir = checkout({ "outside.toml": ruleText("linked") });
    mkdirSync(join(dir, "rules"));
    symlinkSync(join(dir, "outside.toml"), join(dir, "rules", "linked.toml"));
    const { exitCode, findings } = lintJson(dir);
    expect(exitCode).toBe(0);
    expect(findings).toMatchObject([{ file: "rules/linked.toml", severity: "warning", reason: "ignored" }]);
  });
});
