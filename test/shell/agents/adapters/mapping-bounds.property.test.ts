/**
 * The mapping's bounds (issue 26) as properties, one per adapter: generated hostile payloads up to
 * 1 MiB (long runs of separators, deep and long paths, long `cwd`s, many path-bearing fields) go
 * through JSON and the adapter, and whatever comes out is within `payload-bounds.ts`: every path at
 * most `MAX_RAW_PATH`, at most `MAX_RAW_PATHS` of them, the `cwd` within its length and depth or
 * dropped, the event name within its bound or the call refused with a short reason, and the repo-
 * relative paths a row keeps within the journal's bounds. `npm run soak` runs them 50 times as often.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_IDENT, MAX_PATH, MAX_PATHS } from "../../../../src/core/kinds.js";
import { mapClaudeCode } from "../../../../src/shell/agents/adapters/claude-code.js";
import { mapCodex, mapCodexNotify } from "../../../../src/shell/agents/adapters/codex.js";
import { patchPaths } from "../../../../src/shell/agents/ingest/classify.js";
import { type Mapped, type Payload, subagentOf } from "../../../../src/shell/agents/ingest/hook-event.js";
import {
  MAX_CWD,
  MAX_CWD_DEPTH,
  MAX_EVENT_NAME,
  MAX_RAW_PATH,
  MAX_RAW_PATHS,
  MAX_SUBAGENT_FIELD,
  withinDepth,
} from "../../../../src/shell/agents/ingest/payload-bounds.js";
import { repoPaths } from "../../../../src/shell/agents/ingest/repo-paths.js";
import { runs } from "../../../property-runs.js";

const MIB = 1024 * 1024;

/** Text a classifier or path walk may find hard: runs of its separators, quotes and headers. */
const UNITS = [
  ",",
  " ",
  ";",
  "/",
  "/a",
  "../",
  "\n",
  "\t",
  "(",
  "'",
  '"',
  "|",
  "&",
  "a",
  "-n ",
  "cat ",
  "sed -n 1p ",
  "f.txt ",
  "X=1 ",
  "2>&1",
  "*** Update File: ",
  "*** Begin Patch\n",
  "apply_patch ",
  "npm test",
  "\u2028",
  "é",
];

/** A hostile string: a few runs of one unit each, at most `max` characters in all. */
const hostile = (max: number) =>
  fc
    .array(fc.tuple(fc.constantFrom(...UNITS), fc.integer({ min: 1, max: 200_000 })), {
      minLength: 1,
      maxLength: 4,
    })
    .map((runs) =>
      runs
        .map(([unit, n]) => unit.repeat(n))
        .join("")
        .slice(0, max),
    );

const cwd = fc.oneof(
  fc.constant("/work/repo"),
  hostile(64 * 1024).map((s) => `/${s}`),
  fc.integer({ min: 1, max: 30_000 }).map((n) => "/a".repeat(n)),
  fc.constant("relative/dir"),
);

const pathish = fc.oneof(
  fc.constant("src/a.ts"),
  hostile(64 * 1024),
  fc.integer({ min: 1, max: 20_000 }).map((n) => `/w/${"p/".repeat(n)}x`),
);

/** A command naming many files, or a patch with many headers. */
const manyPaths = fc
  .integer({ min: 0, max: 5000 })
  .chain((n) =>
    fc.constantFrom(
      `cat ${Array.from({ length: n }, (_, i) => `f${i}.txt`).join(" ")}`,
      `apply_patch <<'EOF'\n*** Begin Patch\n${Array.from({ length: n }, (_, i) => `*** Add File: f${i}\n`).join("")}*** End Patch\nEOF`,
    ),
  );

const command = fc.oneof(hostile(256 * 1024), manyPaths);

const toolInput = fc.record(
  {
    command: fc.oneof(
      command,
      fc.array(command, { maxLength: 3 }).map((a) => ["bash", "-lc", ...a]),
    ),
    file_path: pathish,
    path: pathish,
    notebook_path: pathish,
    patch: fc.oneof(
      command,
      hostile(256 * 1024).map((s) => `*** Begin Patch\n*** Update File: ${s}\n`),
    ),
  },
  { requiredKeys: [] },
);

const ident = (known: readonly string[]) =>
  fc.oneof(
    fc.constantFrom(...known),
    hostile(4096),
    fc.integer({ min: 1, max: 100_000 }).map((n) => "e".repeat(n)),
  );

const CLAUDE_EVENTS = [
  "SessionStart",
  "SessionEnd",
  "PostToolUse",
  "PostToolUseFailure",
  "PreToolUse",
  "Stop",
];
const TOOLS = [
  "Bash",
  "Read",
  "Edit",
  "Write",
  "Grep",
  "apply_patch",
  "shell",
  "exec_command",
  "NotebookEdit",
];

const hookPayload = (events: readonly string[]) =>
  fc.record({
    session_id: ident(["sess-1"]),
    hook_event_name: ident(events),
    cwd,
    tool_name: ident(TOOLS),
    tool_input: toolInput,
    tool_response: fc.oneof(hostile(4096), fc.constant({ exit_code: 1 })),
    source: ident(["startup"]),
    reason: ident(["clear", "constructor", "__proto__"]),
  });

/** Through JSON as the endpoint reads it, at most 1 MiB; undefined when the case came out larger. */
function viaJson(p: unknown): Payload | undefined {
  const text = JSON.stringify(p);
  return text.length > MIB ? undefined : (JSON.parse(text) as Payload);
}

/** The most a mapped call can hold but for its session id and tool name: its paths, `cwd`, event name and a few fields. */
const MAX_HELD = MAX_RAW_PATHS * (MAX_RAW_PATH * 6 + 3) + MAX_CWD * 6 + MAX_EVENT_NAME * 6 + 1024;

/** Everything the mapping made is within its documented bounds. */
function withinBounds(m: Mapped): void {
  if (!m.ok) {
    // The reason goes to a header and the hook's stderr: never the payload's text.
    expect(m.problem.length).toBeLessThanOrEqual(120);
    return;
  }
  const { hook } = m;
  // What the mapping holds of the payload, but for the ids admission bounds: a fixed size at most.
  const held = JSON.stringify({
    ...hook,
    session: "",
    row: hook.row?.type === "tool" ? { ...hook.row, tool: "" } : hook.row,
  });
  expect(held.length).toBeLessThanOrEqual(MAX_HELD);
  expect(hook.event.length).toBeLessThanOrEqual(MAX_EVENT_NAME);
  if (hook.cwd !== undefined) {
    expect(hook.cwd.length).toBeLessThanOrEqual(MAX_CWD);
    expect(withinDepth(hook.cwd, MAX_CWD_DEPTH)).toBe(true);
  }
  if (hook.row?.type !== "tool") return;
  const { paths, digest } = hook.row;
  expect(paths.length).toBeLessThanOrEqual(MAX_RAW_PATHS);
  for (const p of paths) expect(p.length).toBeLessThanOrEqual(MAX_RAW_PATH);
  if (digest !== undefined) expect(digest).toMatch(/^[0-9a-f]{64}$/);
  // What a row keeps of them: within the journal's bounds, whatever the disk says ("/" holds them all).
  const kept = repoPaths(paths, hook.cwd ?? "/", "/");
  expect(kept.length).toBeLessThanOrEqual(MAX_PATHS);
  for (const p of kept) expect([...p].length).toBeLessThanOrEqual(MAX_PATH);
}

const property = (payload: fc.Arbitrary<unknown>, map: (p: Payload) => Mapped) =>
  fc.assert(
    fc.property(payload, (p) => {
      const parsed = viaJson(p);
      if (parsed !== undefined) withinBounds(map(parsed));
    }),
    { numRuns: runs(12) },
  );

describe("the mapping's bounds hold for hostile payloads up to 1 MiB", () => {
  it("claude-code", () => property(hookPayload(CLAUDE_EVENTS), (p) => mapClaudeCode(p, ["make check"])));

  it("codex", () => property(hookPayload(["SessionStart", "PostToolUse", "Stop"]), (p) => mapCodex(p, [])));

  it("codex-notify", () =>
    property(
      fc.record({ type: ident(["agent-turn-complete"]), "thread-id": ident(["t-1"]), cwd }),
      mapCodexNotify,
    ));
});

describe("a subagent's ids", () => {
  it("are kept exactly when the journal admits them as identifiers, unchanged; anything else is left out", () => {
    expect(MAX_SUBAGENT_FIELD).toBe(MAX_IDENT);
    const value = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 300 }),
      fc.string({ unit: "binary", maxLength: 600 }),
      // Half of a surrogate pair, alone: valid JSON, no Unicode text.
      fc.string({ maxLength: 20 }).map((t) => `${t}\ud800${t}`),
      fc.integer({ min: 0, max: 2_000 }).map((n) => "x".repeat(n)),
      fc.constantFrom(null, 7, true, ["a"], { id: "a" }),
    );
    const admissible = (v: unknown): v is string =>
      typeof v === "string" &&
      v !== "" &&
      [...v].length <= MAX_IDENT &&
      !/\p{Cc}/u.test(v) &&
      !/\p{Surrogate}/u.test(v);
    fc.assert(
      fc.property(value, value, (id, type) => {
        const got = subagentOf({ agent_id: id, agent_type: type });
        expect(got?.id).toBe(admissible(id) ? id : undefined);
        expect(got?.type).toBe(admissible(type) ? type : undefined);
      }),
      { numRuns: runs(300) },
    );
  });
});

/** e4eabc5's patch header reading, backtracking patterns and all: the reference on short text. */
function patchPathsBefore(patch: string): string[] {
  const clean = (raw: string): string | undefined => {
    let p = raw.replace(/^["' ,;:()[\]{}]+|["' ,;:()[\]{}]+$/g, "").trim();
    for (const prefix of ["a/", "b/", "./"]) if (p.startsWith(prefix)) p = p.slice(prefix.length);
    if (p === "" || p.includes("://") || /[\n\r\t]/.test(p) || p.startsWith("--") || p.startsWith("++"))
      return undefined;
    return p;
  };
  const paths = new Set<string>();
  for (const m of patch.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$/gm)) {
    const p = clean((m[1] ?? m[2]) as string);
    if (p !== undefined) paths.add(p);
  }
  return [...paths].sort();
}

describe("the plain scans read what the patterns they replace read", () => {
  it("patch headers and the quotes around their paths, on short text", () => {
    const piece = fc.constantFrom(
      "*** Add File: ",
      "*** Update File: ",
      "*** Delete File: ",
      "*** Move to: ",
      "*** Begin Patch",
      "\n",
      "\r\n",
      "\u2028",
      " ",
      "\t",
      '"',
      "'",
      ",",
      ";",
      ":",
      "(",
      ")",
      "[",
      "]",
      "{",
      "}",
      "a/",
      "b/",
      "./",
      "--",
      "x",
      "src/y.ts",
      "://",
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 24 }), (pieces) => {
        const patch = pieces.join("");
        expect(patchPaths(patch)).toEqual(patchPathsBefore(patch));
      }),
      { numRuns: runs(300) },
    );
  });
});
