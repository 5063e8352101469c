/**
 * Every pattern on the agent hook ingest path is linear-time (issue 26, finding 1): the test lists each
 * regular-expression literal in the files a hook payload passes through and requires it on the reviewed
 * list below, each with why it cannot backtrack super-linearly on any input. A `RegExp` built at run
 * time cannot be reviewed here and is refused; a pattern that must be dynamic goes through re2js. A new
 * pattern fails this test until it is reviewed and listed (or replaced by a plain scan), and a listed
 * pattern no longer in its file fails it too, so the list stays the truth.
 */
import * as fs from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** The files a hook payload's fields pass through before its row is admitted. */
const INGEST_PATH = [
  "src/shell/agents/ingest/ingest.ts",
  "src/shell/agents/ingest/harness-name.ts",
  "src/shell/agents/ingest/hook-limits.ts",
  "src/shell/agents/ingest/hook-event.ts",
  "src/shell/agents/adapters/hooks-protocol.ts",
  "src/shell/agents/adapters/claude-code.ts",
  "src/shell/agents/adapters/codex.ts",
  "src/shell/agents/ingest/classify.ts",
  "src/shell/agents/ingest/go-json-digest.ts",
  "src/shell/agents/ingest/payload-bounds.ts",
  "src/shell/agents/ingest/repo-paths.ts",
  "src/shell/agents/ingest/git-facts.ts",
];

const ONE_CHARACTER = "one character class: at most one step per position";
const ANCHORED =
  "anchored at the start, one attempt; each quantified class is followed by a character it cannot hold, so it never gives back more than it took";

/** file → pattern (as written) → why it is linear. */
const REVIEWED: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  "src/shell/agents/ingest/harness-name.ts": {
    "/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/": `${ANCHORED}; at most 129 characters looked at`,
  },
  "src/shell/agents/ingest/hook-event.ts": {
    "/\\p{Cc}/u": ONE_CHARACTER,
    "/\\p{Surrogate}/u": `${ONE_CHARACTER} (a lone half of a pair; a pair is one code point)`,
    "/^Exit code:? (-?\\d+)/": `${ANCHORED}; run on the response's first 32 characters only`,
  },
  "src/shell/agents/ingest/classify.ts": {
    "/^[A-Za-z_][A-Za-z0-9_]*=/": ANCHORED,
    "/[|;&\\n]/": `${ONE_CHARACTER} (split)`,
    "/\\s+/":
      "split on runs of whitespace: a match takes its whole run and the split resumes after it; elsewhere it fails on the first character",
    "/[<>*?$`]/": ONE_CHARACTER,
    "/[\\n\\r\\t]/": ONE_CHARACTER,
  },
  "src/shell/agents/ingest/go-json-digest.ts": {
    "/[<>&\\b\\f\\u2028\\u2029\\ud800-\\udfff]/": ONE_CHARACTER,
  },
  "src/shell/agents/ingest/repo-paths.ts": {
    "/\\p{Cc}/u": ONE_CHARACTER,
    "/\\p{Surrogate}/u": `${ONE_CHARACTER} (a code point with the u flag)`,
  },
  "src/shell/agents/ingest/git-facts.ts": {
    "/\\p{Cc}/u": ONE_CHARACTER,
    "/^([a-z][a-z0-9+.-]*):\\/\\/([^/]*)(\\/.*)?$/i": `${ANCHORED}; the URL holds no line break (refused by the control-character check first) and at most 2048 characters`,
    "/^.*@/":
      "anchored at the start, one attempt: `.*` runs to the end and gives back at most the URL's authority (2048 characters at most)",
    "/^\\[([^\\]]*)\\]/": ANCHORED,
    "/:\\d*$/":
      "tried at each colon, the digits after it each looked at once: runs after different colons do not overlap",
    "/^(?:[^@/]*@)?([^:/]+):(.*)$/": ANCHORED,
    "/\\.git\\/?$/": "a fixed literal tried at each position: constant work per position",
  },
};

interface Found {
  readonly pattern: string;
  readonly line: number;
}

/** The regular-expression literals of a source, and every use of `RegExp` (built at run time). */
function patternsIn(file: string, text: string): { literals: Found[]; dynamic: Found[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const literals: Found[] = [];
  const dynamic: Found[] = [];
  const at = (n: ts.Node) => source.getLineAndCharacterOfPosition(n.getStart()).line + 1;
  const visit = (n: ts.Node): void => {
    if (n.kind === ts.SyntaxKind.RegularExpressionLiteral)
      literals.push({ pattern: n.getText(), line: at(n) });
    else if (ts.isIdentifier(n) && n.text === "RegExp") dynamic.push({ pattern: "RegExp", line: at(n) });
    ts.forEachChild(n, visit);
  };
  visit(source);
  return { literals, dynamic };
}

describe("the hook ingest path's patterns", () => {
  it.each(INGEST_PATH)("%s: every pattern is a reviewed linear one, none built at run time", (file) => {
    const { literals, dynamic } = patternsIn(file, fs.readFileSync(`${REPO}/${file}`, "utf8"));
    const reviewed = REVIEWED[file] ?? {};
    const unreviewed = literals.filter((l) => !Object.hasOwn(reviewed, l.pattern));
    expect(
      unreviewed.map((l) => `${file}:${l.line} ${l.pattern}`),
      "patterns not reviewed as linear: make each a plain scan or re2js, or review it and list it here",
    ).toEqual([]);
    expect(
      dynamic.map((d) => `${file}:${d.line}`),
      "RegExp built at run time: use re2js",
    ).toEqual([]);
    const stale = Object.keys(reviewed).filter((p) => !literals.some((l) => l.pattern === p));
    expect(stale, "reviewed patterns no longer in the file: drop them from the list").toEqual([]);
  });

  it("every reviewed file is on the ingest path", () => {
    expect(Object.keys(REVIEWED).filter((f) => !INGEST_PATH.includes(f))).toEqual([]);
  });

  it("the check finds what e4eabc5's cleanPath held, and a pattern built at run time", () => {
    const { literals, dynamic } = patternsIn(
      "x.ts",
      'const p = raw.replace(/^["\' ,;:()[\\]{}]+|["\' ,;:()[\\]{}]+$/g, "");\nconst r = new RegExp(s);\n',
    );
    expect(literals).toEqual([{ pattern: `/^["' ,;:()[\\]{}]+|["' ,;:()[\\]{}]+$/g`, line: 1 }]);
    expect(Object.values(REVIEWED).some((r) => Object.hasOwn(r, literals[0]?.pattern as string))).toBe(false);
    expect(dynamic).toEqual([{ pattern: "RegExp", line: 2 }]);
  });
});
