/**
 * A rule file's bytes as text, before any parsing: every reader of rule files (the daemon's policy
 * clones, lint, backtest) goes through this, so all of them refuse the same files for the same reason.
 * A module of its own, free of the CEL compiler, so a command that only reads a file stays light.
 */
import type { RuleProblem } from "./rule-file.js";

/**
 * The largest rule file read, in bytes. A rule is a dozen short keys (a `when` of a few hundred
 * characters, a message of at most 280): 256 KiB leaves room for comments and refuses, before any
 * parsing, the file that would cost the loader time or memory.
 */
export const MAX_RULE_FILE_BYTES = 256 * 1024;

/**
 * The most rule files read from one policy repo. An organisation's rules number in the tens; a repo with
 * a hundred thousand files would hold the daemon's reload (compiling each) for most of a minute. The
 * files past the limit, in name order, are disabled unread.
 */
export const MAX_RULE_FILES_PER_REPO = 1_000;

/** The problem of a rule file past the first `MAX_RULE_FILES_PER_REPO` of its repo, in name order. */
export function ruleFilePastLimit(file: string): RuleProblem {
  const message = `the repo holds more than ${MAX_RULE_FILES_PER_REPO.toLocaleString("en-US")} rule files; this one, past them in name order, is not read`;
  return { reason: "schema", file, message };
}

/** The problem of a file over `MAX_RULE_FILE_BYTES`, known from its size before it is read. */
export function ruleFileTooLarge(file: string): RuleProblem {
  const message = `the file is larger than ${MAX_RULE_FILE_BYTES / 1024} KiB, the limit for a rule file`;
  return { reason: "schema", file, message };
}

/**
 * The problem of a `rules/<name>.toml` that is a symlink: its target may lie outside the repo, so no
 * reader follows it; said rather than skipped, so the author learns why the rule is not in force.
 */
export function ruleFileIsSymlink(file: string): RuleProblem {
  const message = "is a symlink: the daemon does not follow it; commit the rule as a regular file";
  return { reason: "schema", file, message };
}

/**
 * A rule file's bytes (at most `MAX_RULE_FILE_BYTES + 1` of them, so an oversized file is known
 * without reading it all) as text: too large or not UTF-8 is a `schema` problem. Every reader of rule
 * files (the daemon's policy clones, lint, backtest) goes through it, so they refuse the same files.
 */
export function ruleFileText(
  file: string,
  bytes: Uint8Array,
): { readonly ok: true; readonly text: string } | { readonly ok: false; readonly problem: RuleProblem } {
  if (bytes.length > MAX_RULE_FILE_BYTES) return { ok: false, problem: ruleFileTooLarge(file) };
  try {
    return { ok: true, text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch {
    return { ok: false, problem: { reason: "schema", file, message: "the file is not valid UTF-8" } };
  }
}
