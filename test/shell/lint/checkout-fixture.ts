/** Policy repo checkouts for lint's tests: temporary directories written from a map of files. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll } from "vitest";
import { runLint } from "../../../src/shell/cli/commands/rules-lint.js";
import type { Finding } from "../../../src/shell/lint/findings.js";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

export function checkout(files: Readonly<Record<string, string | Uint8Array>>): string {
  const dir = mkdtempSync(join(tmpdir(), "lint-"));
  made.push(dir);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

/** A rule file's text: the REQ-3 keys one per line, in this order, so `when` is line 4. */
export function ruleText(name: string, overrides: Readonly<Record<string, string>> = {}): string {
  const fields: Record<string, string> = {
    name: JSON.stringify(name),
    description: JSON.stringify(`The ${name} rule`),
    on: '"run_event"',
    when: JSON.stringify('event.type == "closed" && event.outcome == "failed"'),
    level: '"notify"',
    target: '"harness"',
    message: '"{{harness}} matched {{rule}}"',
  };
  for (const [k, v] of Object.entries(overrides)) fields[k] = v;
  return `${Object.entries(fields)
    .map(([k, v]) => `${k} = ${v}`)
    .join("\n")}\n`;
}

export interface LintRun {
  readonly exitCode: number;
  readonly lines: readonly string[];
  readonly stderr: readonly string[];
}

export function lint(dir: string, options: { json?: boolean; strict?: boolean } = {}): LintRun {
  const lines: string[] = [];
  const stderr: string[] = [];
  const exitCode = runLint(dir, options, { env: {}, out: (l) => lines.push(l), err: (l) => stderr.push(l) });
  return { exitCode, lines, stderr };
}

export function lintJson(
  dir: string,
  options: { strict?: boolean } = {},
): { exitCode: number; findings: Finding[] } {
  const run = lint(dir, { ...options, json: true });
  return { exitCode: run.exitCode, findings: JSON.parse(run.lines.join("\n")) as Finding[] };
}
