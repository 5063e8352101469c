/**
 * The architecture as `test/architecture/layers.ts` states it: no import cycle, between the files of src/
 * or between the folders of src/shell, type-only imports included (they tie two modules as much as value
 * imports do); no import up the layers or into CEL past its entry; no import between folders of src/shell
 * that the table does not list; no SQL text outside the store, no `Db` handle outside it and the
 * composition root, no agent adapter's name outside the adapters' folder; no CLI command importing
 * another; and ARCHITECTURE.md saying the same as the table. Each check is shown failing on a fixture
 * tree (the command check, on a list of imports) made to break it.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { arrowViolations, folderMismatches, layerViolations, unusedArrows } from "./architecture/arrows.js";
import { formatCycles } from "./architecture/cycle-report.js";
import { type Cycle, eachFile, findCycles, shellFolder } from "./architecture/cycles.js";
import { docDisagreements, renderImports } from "./architecture/doc-imports.js";
import { type Import, importGraph } from "./architecture/import-graph.js";
import {
  ADAPTER_NAMES,
  ADAPTERS_HOME,
  COMMANDS_HOME,
  DB_HOMES,
  IMPORTS_NOTHING,
  SHELL_FOLDERS,
  SQL_HOME,
} from "./architecture/layers.js";
import {
  dbHandles,
  type Finding,
  formatFindings,
  literalsOf,
  type Parsed,
  parseTree,
  sqlTexts,
} from "./architecture/source-scan.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const fixture = (name: string) => fileURLToPath(new URL(`fixtures/architecture/${name}`, import.meta.url));

function expectNoCycles(cycles: readonly Cycle[], between: string): void {
  if (cycles.length > 0)
    expect.fail(`${cycles.length} import cycles between ${between}:\n${formatCycles(cycles)}`);
}

/** The store's door, the composition root's and the adapters': findings outside the folders they allow. */
const outside = (homes: readonly string[]) => (f: Finding) => !homes.some((h) => f.file.startsWith(h));
const sqlOutsideStore = (tree: readonly Parsed[]) => tree.flatMap(sqlTexts).filter(outside([SQL_HOME]));
const dbOutsideStore = (tree: readonly Parsed[]) => tree.flatMap(dbHandles).filter(outside(DB_HOMES));
const adapterNamesOutside = (tree: readonly Parsed[]) =>
  tree.flatMap((p) => literalsOf(p, ADAPTER_NAMES)).filter(outside([ADAPTERS_HOME]));
/** Imports from one CLI command's module to another's, as `from → to`. */
const commandToCommand = (imports: readonly Import[]) =>
  imports
    .filter((i) => i.from.startsWith(COMMANDS_HOME) && i.to.startsWith(COMMANDS_HOME))
    .map((i) => `${i.from} → ${i.to}`);

describe("src/ as the table has it", () => {
  let imports: readonly Import[];
  let tree: readonly Parsed[];
  beforeAll(async () => {
    imports = await importGraph(REPO);
    tree = parseTree(REPO);
  });

  it("has no import cycle between files", () => {
    expectNoCycles(findCycles(imports, eachFile), "files of src/");
  });

  it("has no import cycle between the folders of src/shell, its plain files counting as one folder", () => {
    expectNoCycles(findCycles(imports, shellFolder), "folders of src/shell");
  });

  it("imports nothing up the layers (src/cel ← src/core ← src/shell), and CEL only through its entry", () => {
    expect(layerViolations(imports, SHELL_FOLDERS)).toEqual([]);
  });

  it("imports between folders of src/shell only along the table's arrows", () => {
    expect(
      arrowViolations(imports, SHELL_FOLDERS),
      "add the arrow to test/architecture/layers.ts, or move the code",
    ).toEqual([]);
  });

  it("has the table's folders, and takes every arrow of it", () => {
    expect(
      folderMismatches(
        tree.map((p) => p.file),
        SHELL_FOLDERS,
      ),
    ).toEqual([]);
    expect(unusedArrows(imports, SHELL_FOLDERS), "arrows no import takes: drop them from the table").toEqual(
      [],
    );
  });

  it("has a loop guard that imports nothing: it is not a rule (REQ-12)", () => {
    expect(IMPORTS_NOTHING.every((f) => tree.some((p) => p.file === f))).toBe(true);
    expect(imports.filter((i) => (IMPORTS_NOTHING as readonly string[]).includes(i.from))).toEqual([]);
  });

  it("is what ARCHITECTURE.md says: its layers line and each folder's Imports sentence", () => {
    const markdown = fs.readFileSync(path.join(REPO, "ARCHITECTURE.md"), "utf8");
    expect(docDisagreements(markdown, SHELL_FOLDERS)).toEqual([]);
  });

  it("holds no SQL text outside src/shell/store/", () => {
    expect(formatFindings(sqlOutsideStore(tree)), "the store owns every statement").toEqual([]);
  });

  it("names no Db handle outside src/shell/store/ and the composition root", () => {
    expect(formatFindings(dbOutsideStore(tree)), "callers get store objects, not the handle").toEqual([]);
  });

  it("writes no agent adapter's name outside src/shell/agents/adapters/", () => {
    expect(formatFindings(adapterNamesOutside(tree)), "ask the adapter registry").toEqual([]);
  });

  it("has no CLI command importing another: what two share is a helper of src/shell/cli/", () => {
    expect(commandToCommand(imports), "move the shared part to a module of src/shell/cli/").toEqual([]);
  });
});

describe("the command check", () => {
  it("fails a command importing another, and passes one importing a helper of cli/", () => {
    const imports: Import[] = [
      {
        from: "src/shell/cli/commands/demo.ts",
        to: "src/shell/cli/commands/rules-admission.ts",
        kind: "static",
      },
      { from: "src/shell/cli/commands/demo.ts", to: "src/shell/cli/clear-hold.ts", kind: "static" },
      { from: "src/shell/cli/main.ts", to: "src/shell/cli/commands/demo.ts", kind: "dynamic" },
    ];
    expect(commandToCommand(imports)).toEqual([
      "src/shell/cli/commands/demo.ts → src/shell/cli/commands/rules-admission.ts",
    ]);
  });
});

describe("the layer and table checks", () => {
  it("fail an import of src/shell from src/core", async () => {
    const imports = await importGraph(fixture("core-imports-shell"));
    expect(layerViolations(imports, SHELL_FOLDERS)).toEqual([
      "src/core/evaluate.ts → src/shell/support/log.ts: src/core may not import src/shell (cel ← core ← shell)",
    ]);
  });

  it("fail an import of src/core or src/shell from src/cel", async () => {
    const imports = await importGraph(fixture("cel-imports-up"));
    expect(layerViolations(imports, SHELL_FOLDERS)).toEqual([
      "src/cel/check.ts → src/core/kinds.ts: src/cel may not import src/core (cel ← core ← shell)",
      "src/cel/runtime.ts → src/shell/support/log.ts: src/cel may not import src/shell (cel ← core ← shell)",
    ]);
  });

  it("fail an import into CEL past src/cel/index.ts, and pass one through it", async () => {
    const imports = await importGraph(fixture("past-cel-entry"));
    expect(imports.some((i) => i.to === "src/cel/index.ts")).toBe(true);
    expect(layerViolations(imports, SHELL_FOLDERS)).toEqual([
      "src/core/compile.ts → src/cel/runtime.ts: outside src/cel, CEL is imported through src/cel/index.ts",
    ]);
  });

  it("fail an import between folders of src/shell the table does not list, and a folder it does not know", async () => {
    const root = fixture("unlisted-arrow");
    const imports = await importGraph(root);
    expect(arrowViolations(imports, SHELL_FOLDERS)).toEqual([
      "src/shell/rpc/watch-events.ts → src/shell/daemon/event-bus.ts: rpc may import only daemon's types (static import)",
      "src/shell/scratch/notes.ts → src/shell/support/log.ts: scratch is not in the table",
      "src/shell/tui/console-data.ts → src/shell/scratch/notes.ts: the table has no arrow tui → scratch",
      "src/shell/tui/console-data.ts → src/shell/store/rule-reads.ts: the table has no arrow tui → store",
    ]);
    const files = parseTree(root).map((p) => p.file);
    expect(folderMismatches(files, SHELL_FOLDERS)).toContain("scratch: in src/shell, not in the table");
  });

  it("fail ARCHITECTURE.md where it says other than the table", () => {
    const table = { store: [], rpc: ["store", { to: "daemon", typeOnly: true }], cli: ["rpc"] } as const;
    const markdown = [
      "`src/cel` ← `src/core` ← `src/shell`",
      "## `src/shell`: everything that touches the world",
      "- `store/`: every SQL statement. Imports nothing else.",
      "- `rpc/`: the handlers. Imports: store, daemon.",
      "- `tui/`: the console. Imports: rpc.",
      "## How a row flows",
      "- `cli/`: not in the section. Imports: rpc.",
    ].join("\n");
    expect(renderImports(table.rpc)).toBe("Imports: store, daemon (types).");
    expect(docDisagreements(markdown, table)).toEqual([
      'rpc: ARCHITECTURE.md says "Imports: store, daemon.", the table "Imports: store, daemon (types)."',
      "tui: in ARCHITECTURE.md, not in the table",
      "cli: in the table, no bullet in ARCHITECTURE.md",
    ]);
    expect(docDisagreements(markdown.replace("`src/core` ←", "`src/core` →"), table)[0]).toBe(
      "the layers line is not `src/cel` ← `src/core` ← `src/shell`",
    );
  });
});

describe("the store's and the adapters' door checks", () => {
  it("fail SQL text in src/shell/rpc, in a string and in a template, and pass it in the store", () => {
    const tree = parseTree(fixture("sql-in-rpc"));
    expect(tree.flatMap(sqlTexts).some((f) => f.file.startsWith(SQL_HOME))).toBe(true);
    expect(formatFindings(sqlOutsideStore(tree))).toEqual([
      "src/shell/rpc/rule-service.ts:3 SELECT name FROM",
      "src/shell/rpc/rule-service.ts:5 UPDATE rules SET",
    ]);
  });

  it("fail a Db parameter, field or import outside the store and the composition root", () => {
    const tree = parseTree(fixture("db-outside-store"));
    expect(tree.flatMap(dbHandles).some((f) => f.file.startsWith("src/shell/app/"))).toBe(true);
    expect(formatFindings(dbOutsideStore(tree))).toEqual([
      'src/shell/demo/demo.ts:1 "better-sqlite3"',
      "src/shell/journal/journal-writer.ts:1 Db",
      "src/shell/journal/journal-writer.ts:4 Db",
      "src/shell/rpc/rule-service.ts:1 Db",
      "src/shell/rpc/rule-service.ts:3 Db",
    ]);
  });

  it("fail an adapter's name written outside src/shell/agents/adapters/, as a value or a type", () => {
    const tree = parseTree(fixture("adapter-name-literal"));
    expect(
      tree.flatMap((p) => literalsOf(p, ADAPTER_NAMES)).filter((f) => f.file.startsWith(ADAPTERS_HOME)),
    ).toHaveLength(2);
    expect(formatFindings(adapterNamesOutside(tree))).toEqual([
      'src/core/hook-runs.ts:2 "claude-code"',
      'src/shell/cli/agents.ts:1 "claude-code"',
      'src/shell/cli/agents.ts:1 "codex"',
      'src/shell/cli/agents.ts:3 "codex"',
    ]);
  });
});

describe("the import-cycle check", () => {
  it("passes a tree without cycles, where rpc/ and rpc/gen/ import each other as one folder", async () => {
    const imports = await importGraph(fixture("acyclic"));
    expect(imports.map((i) => `${i.from} → ${i.to} ${i.kind}`).sort()).toEqual([
      "src/core/evaluate.ts → src/core/rule.ts type-only",
      "src/shell/cli.ts → src/shell/daemon/daemon.ts dynamic",
      "src/shell/daemon/daemon.ts → src/core/evaluate.ts static",
      "src/shell/daemon/daemon.ts → src/core/rule.ts type-only",
      "src/shell/daemon/daemon.ts → src/shell/rpc/server.ts static",
      "src/shell/daemon/daemon.ts → src/shell/support/log.ts static",
      "src/shell/rpc/gen/rules_pb.ts → src/shell/rpc/limits.ts type-only",
      "src/shell/rpc/server.ts → src/shell/rpc/gen/rules_pb.ts static",
    ]);
    expect(findCycles(imports, eachFile)).toEqual([]);
    expect(findCycles(imports, shellFolder)).toEqual([]);
  });

  it("fails a tree whose only cycles are type-only imports, naming each import", async () => {
    const imports = await importGraph(fixture("type-only-cycle"));
    expect(imports.every((i) => i.kind === "type-only")).toBe(true);
    expect(formatCycles(findCycles(imports, eachFile))).toBe(
      [
        "src/core/evaluate.ts → src/core/rule-set.ts → src/core/evaluate.ts",
        "  src/core/evaluate.ts → src/core/rule-set.ts (type-only)",
        "  src/core/rule-set.ts → src/core/evaluate.ts (type-only)",
      ].join("\n"),
    );
    expect(formatCycles(findCycles(imports, shellFolder))).toBe(
      [
        "src/shell/* → src/shell/daemon/ → src/shell/*",
        "  src/shell/* → src/shell/daemon/",
        "    src/shell/cli.ts → src/shell/daemon/daemon.ts (type-only)",
        "  src/shell/daemon/ → src/shell/*",
        "    src/shell/daemon/daemon.ts → src/shell/log.ts (type-only)",
        "src/shell/daemon/ → src/shell/rpc/ → src/shell/daemon/",
        "  src/shell/daemon/ → src/shell/rpc/",
        "    src/shell/daemon/daemon.ts → src/shell/rpc/service.ts (type-only)",
        "  src/shell/rpc/ → src/shell/daemon/",
        "    src/shell/rpc/handlers.ts → src/shell/daemon/daemon.ts (type-only)",
      ].join("\n"),
    );
  });

  it("refuses a tree with a relative import it cannot resolve, which could hide a cycle", async () => {
    // Made here rather than kept as a fixture: the repository's typecheck would refuse the file.
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "architecture-"));
    try {
      fs.mkdirSync(path.join(root, "src"));
      fs.writeFileSync(path.join(root, "src", "a.ts"), 'export { b } from "./missing.js";\n');
      await expect(importGraph(root)).rejects.toThrow(/src\/a\.ts: cannot resolve "\.\/missing\.js"/);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
