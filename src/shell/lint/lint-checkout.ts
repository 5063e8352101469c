/**
 * Reading a policy repo checkout for `harness rules lint` (SPEC-0029 REQ-21): the top level of
 * `rules/` (what the daemon loads), `tests/` (the rule tests) and everything under `weights/` (the
 * fact store's snapshot). Only the directory is read: no config, no store, no daemon, no network.
 * Each file is read up to its size limit plus one byte, so a huge file costs no memory, and each file's
 * problem is its own finding: one unreadable or hostile file does not stop the others.
 */
import { type Dirent, readdirSync } from "node:fs";
import { join } from "node:path";
import {
  MAX_RULE_FILE_BYTES,
  MAX_RULE_FILES_PER_REPO,
  ruleFilePastLimit,
} from "../../core/rule-file-bytes.js";
import { readBounded } from "../support/bounded-read.js";
import { type Finding, finding } from "./findings.js";
import { lintRuleFiles, type RuleFileInput } from "./rule-files.js";
import { MAX_TEST_FILE_BYTES, runRuleTests } from "./rule-tests.js";
import { lintWeightsSnapshot, MAX_WEIGHTS_BYTES, WEIGHTS_FILE } from "./weights-snapshot.js";

export type CheckoutLint =
  | { readonly ok: true; readonly findings: readonly Finding[]; readonly ruleFiles: number }
  | { readonly ok: false; readonly error: string };

/** Files under `weights/` visited at most; a checkout with more is reported, not walked further. */
const MAX_WEIGHTS_ENTRIES = 1_000;

export function lintCheckout(dir: string): CheckoutLint {
  let top: Dirent[];
  try {
    top = readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    return { ok: false, error: `cannot read ${dir}: ${(e as Error).message}` };
  }
  const has = (name: string) => top.find((d) => d.name === name);
  const findings: Finding[] = [];

  let ruleEntries: Dirent[] = [];
  const rulesDir = has("rules");
  // A repo that holds only weights/ (SPEC-0028's weights_repo) has no rules/, and that is fine.
  if (rulesDir !== undefined) {
    try {
      ruleEntries = sorted(readdirSync(join(dir, "rules"), { withFileTypes: true }));
    } catch (e) {
      return { ok: false, error: `cannot read ${join(dir, "rules")}: ${(e as Error).message}` };
    }
  }
  const inputs: RuleFileInput[] = [];
  const ruleNames = new Set<string>();
  // Counted in name order, as the daemon counts a clone's: the files past its limit it does not read.
  let ruleFiles = 0;
  for (const d of ruleEntries) {
    const file = `rules/${d.name}`;
    const kind = entryKind(d);
    if (kind === "directory") {
      findings.push(
        ignored(`${file}/`, "is a directory: the daemon reads only rules/<name>.toml at the top of rules/"),
      );
    } else if (kind !== "file") {
      // A link may point out of the checkout, and what the daemon makes of it is not lint's to guess.
      findings.push(
        finding(
          file,
          undefined,
          "warning",
          "ignored",
          `is a ${kind}: lint does not follow it; commit the rule as a regular file`,
        ),
      );
    } else if (!d.name.endsWith(".toml")) {
      findings.push(ignored(file, "is not a .toml file: the daemon ignores it"));
    } else if (++ruleFiles > MAX_RULE_FILES_PER_REPO) {
      findings.push(finding(file, undefined, "error", "schema", ruleFilePastLimit(file).message));
    } else {
      const read = readBounded(join(dir, file), MAX_RULE_FILE_BYTES);
      if ("error" in read) findings.push(finding(file, undefined, "error", "unreadable", read.error));
      else {
        inputs.push({ file, bytes: read.bytes });
        ruleNames.add(d.name.slice(0, -".toml".length));
      }
    }
  }
  const rules = lintRuleFiles(inputs);
  findings.push(...rules.findings);
  const nestedDirs = ruleEntries.filter((d) => d.isDirectory()).map((d) => `rules/${d.name}`);
  findings.push(...nestedNamesakes(dir, nestedDirs, ruleNames));

  if (has("tests") !== undefined) findings.push(...lintTests(dir, rules.loaded, ruleNames));
  if (has("weights") !== undefined) findings.push(...lintWeights(dir));
  return { ok: true, findings, ruleFiles: inputs.length };
}

/** Entries below rules/ visited at most when looking for namesakes. */
const MAX_NESTED_ENTRIES = 10_000;

/**
 * Two files under rules/ with one name (REQ-21): the daemon loads only the top-level one, so a
 * `rules/<dir>/…/<name>.toml` beside `rules/<name>.toml` is an error: one of the two is not what
 * the author meant. Nested files are not parsed; their basename is their name.
 */
function nestedNamesakes(dir: string, start: readonly string[], names: ReadonlySet<string>): Finding[] {
  const findings: Finding[] = [];
  const pending = [...start];
  let visited = 0;
  while (pending.length > 0 && visited < MAX_NESTED_ENTRIES) {
    const rel = pending.shift() as string;
    let entries: Dirent[];
    try {
      entries = sorted(readdirSync(join(dir, rel), { withFileTypes: true }));
    } catch {
      continue;
    }
    for (const d of entries) {
      if (++visited > MAX_NESTED_ENTRIES) break;
      const file = `${rel}/${d.name}`;
      if (d.isDirectory()) pending.push(file);
      else if (d.isFile() && d.name.endsWith(".toml") && names.has(d.name.slice(0, -".toml".length))) {
        findings.push(
          finding(
            file,
            undefined,
            "error",
            "duplicate_name",
            `has the name of rules/${d.name}; the daemon loads only the top-level file and ignores this one`,
          ),
        );
      }
    }
  }
  return findings;
}

function lintTests(
  dir: string,
  loaded: ReturnType<typeof lintRuleFiles>["loaded"],
  ruleNames: ReadonlySet<string>,
): Finding[] {
  let entries: Dirent[];
  try {
    entries = sorted(readdirSync(join(dir, "tests"), { withFileTypes: true }));
  } catch (e) {
    return [
      finding("tests", undefined, "error", "unreadable", `cannot read tests/: ${(e as Error).message}`),
    ];
  }
  const findings: Finding[] = [];
  for (const d of entries) {
    const file = `tests/${d.name}`;
    if (entryKind(d) !== "file" || !d.name.endsWith(".toml")) {
      findings.push(ignored(file, "is not a tests/<name>.toml file: lint runs only those"));
      continue;
    }
    const name = d.name.slice(0, -".toml".length);
    if (!ruleNames.has(name)) {
      findings.push(
        finding(file, undefined, "error", "test_format", `there is no rules/${name}.toml for it to test`),
      );
      continue;
    }
    const text = readText(join(dir, file), MAX_TEST_FILE_BYTES);
    if ("error" in text) findings.push(finding(file, undefined, "error", "test_format", text.error));
    else findings.push(...runRuleTests(file, text.text, loaded.get(name), `rules/${name}.toml`));
  }
  return findings;
}

/** Every file under `weights/`: the snapshot is checked; any other file is not part of its format. */
function lintWeights(dir: string): Finding[] {
  const findings: Finding[] = [];
  const pending = ["weights"];
  let visited = 0;
  while (pending.length > 0) {
    const rel = pending.shift() as string;
    let entries: Dirent[];
    try {
      entries = sorted(readdirSync(join(dir, rel), { withFileTypes: true }));
    } catch (e) {
      findings.push(
        finding(rel, undefined, "error", "unreadable", `cannot read ${rel}/: ${(e as Error).message}`),
      );
      continue;
    }
    for (const d of entries) {
      const file = `${rel}/${d.name}`;
      if (++visited > MAX_WEIGHTS_ENTRIES) {
        findings.push(
          finding(
            "weights",
            undefined,
            "error",
            "weights_format",
            `weights/ holds more than ${MAX_WEIGHTS_ENTRIES} entries; the rest are not checked`,
          ),
        );
        return findings;
      }
      const kind = entryKind(d);
      if (kind === "directory") pending.push(file);
      else if (file === WEIGHTS_FILE && kind === "file") {
        const text = readText(join(dir, file), MAX_WEIGHTS_BYTES);
        if ("error" in text) findings.push(finding(file, undefined, "error", "weights_format", text.error));
        else findings.push(...lintWeightsSnapshot(text.text));
      } else
        findings.push(
          finding(
            file,
            undefined,
            "error",
            "weights_format",
            `is not part of the weights snapshot format: weights/ holds only ${WEIGHTS_FILE}`,
          ),
        );
    }
  }
  return findings;
}

const ignored = (file: string, message: string): Finding =>
  finding(file, undefined, "notice", "ignored", message);

const sorted = (entries: Dirent[]): Dirent[] =>
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

function entryKind(d: Dirent): string {
  if (d.isFile()) return "file";
  if (d.isDirectory()) return "directory";
  if (d.isSymbolicLink()) return "symbolic link";
  return "special file";
}

function readText(path: string, limit: number): { text: string } | { error: string } {
  const read = readBounded(path, limit);
  if ("error" in read) return read;
  if (read.bytes.length > limit)
    return { error: `the file is larger than ${limit / 1024} KiB, the limit for it` };
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(read.bytes) };
  } catch {
    return { error: "the file is not valid UTF-8" };
  }
}
