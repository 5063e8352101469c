/**
 * The action and paths of a tool call agree with the Go supervisor's classifier (agent-trace's
 * `classify/action.go`, `classify/shell.go`) on the same inputs, and `[agents] verify_patterns` adds
 * to its test and build patterns.
 */
import { describe, expect, it } from "vitest";
import { patchPaths, toolAction, toolPaths } from "../../../../src/shell/agents/ingest/classify.js";

const bash = (command: string, patterns: readonly string[] = []) => toolAction("Bash", { command }, patterns);

describe("action", () => {
  it.each([
    ["Read", "read"],
    ["Write", "edit"],
    ["Edit", "edit"],
    ["MultiEdit", "edit"],
    ["NotebookEdit", "edit"],
    ["apply_patch", "edit"],
    ["Grep", "search"],
    ["Glob", "search"],
    ["LS", "search"],
    ["WebFetch", "other"],
    ["Task", "other"],
    ["mcp__github__create_issue", "other"],
  ])("%s → %s", (tool, action) => {
    expect(toolAction(tool, {})).toBe(action);
  });

  it.each([
    ["go test ./...", "verify"],
    ["npm test", "verify"],
    ["pnpm test -- --run", "verify"],
    ["cd api && pytest -q", "verify"],
    ["cargo test --all", "verify"],
    ["make test", "verify"],
    ["npm run build", "verify"],
    ["NPM TEST", "verify"],
    ["grep -rn TODO src", "search"],
    ["rg foo | head -5", "search"],
    ["find . -name '*.ts'", "search"],
    ["fd spec", "search"],
    ["ls -la", "search"],
    ["git grep -n needle", "search"],
    ["find . -name x -delete", "exec"],
    ["find . -exec rm {} ;", "exec"],
    ["grep foo src > out.txt", "exec"],
    ["cat src/a.ts", "read"],
    ["head -n 20 README.md", "read"],
    ["tail -f log.txt", "read"],
    ["sed -n '1,20p' src/a.ts", "read"],
    ["sed -i s/a/b/ src/a.ts", "exec"],
    ["cat a.txt > b.txt", "exec"],
    ["echo hi", "exec"],
    ["rm -rf build", "exec"],
    ["git commit -m x", "exec"],
    ["FOO=1 grep x y 2>/dev/null", "search"],
  ])("Bash %j → %s", (command, action) => {
    expect(bash(command)).toBe(action);
  });

  it("[agents] verify_patterns add to the built-in patterns; a blank pattern matches nothing", () => {
    expect(bash("just check")).toBe("exec");
    expect(bash("just check", ["Just Check"])).toBe("verify");
    expect(bash("rm -rf build", ["  ", ""])).toBe("exec");
  });

  it("Codex's shell: a command string, or argv with the script after -lc", () => {
    expect(toolAction("shell", { command: ["bash", "-lc", "go test ./..."] })).toBe("verify");
    expect(toolAction("shell", { command: ["rg", "x"] })).toBe("search");
  });

  it("a shell call that runs apply_patch on a here-document is an edit", () => {
    const command =
      "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/a.ts\n@@\n-a\n+b\n*** End Patch\nEOF";
    expect(toolAction("Bash", { command })).toBe("edit");
    expect(toolPaths("Bash", { command })).toEqual(["src/a.ts"]);
  });
});

describe("paths", () => {
  it("per tool, the input keys the Go classifier reads", () => {
    expect(toolPaths("Read", { file_path: "/r/a.ts", offset: 3 })).toEqual(["/r/a.ts"]);
    expect(toolPaths("Write", { file_path: "/r/b.ts", content: "x" })).toEqual(["/r/b.ts"]);
    expect(toolPaths("NotebookEdit", { notebook_path: "/r/n.ipynb" })).toEqual(["/r/n.ipynb"]);
    expect(toolPaths("Grep", { pattern: "x", path: "/r/src" })).toEqual(["/r/src"]);
    expect(toolPaths("Bash", { command: "cat src/a.ts src/b.ts | wc -l" })).toEqual(["src/a.ts", "src/b.ts"]);
    expect(toolPaths("Bash", { command: "sed -n '1,5p' ./src/c.ts" })).toEqual(["src/c.ts"]);
    expect(toolPaths("Bash", { command: "head -n 5 x.txt" })).toEqual(["x.txt"]);
    expect(toolPaths("WebFetch", { url: "https://x" })).toEqual([]);
    expect(toolPaths("Read", "not an object")).toEqual([]);
  });

  it("apply_patch paths come from the patch headers, moves included", () => {
    const patch = [
      "*** Begin Patch",
      "*** Update File: src/a.ts",
      "*** Move to: src/b.ts",
      "*** Delete File: old.txt",
      "*** Add File: new/c.ts",
      "*** Update File: src/a.ts",
      "*** End Patch",
    ].join("\n");
    expect(patchPaths(patch)).toEqual(["new/c.ts", "old.txt", "src/a.ts", "src/b.ts"]);
    expect(toolPaths("apply_patch", { command: patch })).toEqual([
      "new/c.ts",
      "old.txt",
      "src/a.ts",
      "src/b.ts",
    ]);
  });
});
