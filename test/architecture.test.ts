/**
 * No import cycle, between the files of src/ or between the folders of src/shell, type-only imports
 * included: they tie two modules as much as value imports do. A failure lists every cycle with the
 * imports that make it.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { formatCycles } from "./architecture/cycle-report.js";
import { type Cycle, eachFile, findCycles, shellFolder } from "./architecture/cycles.js";
import { type Import, importGraph } from "./architecture/import-graph.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const fixture = (name: string) => fileURLToPath(new URL(`fixtures/architecture/${name}`, import.meta.url));

function expectNoCycles(cycles: readonly Cycle[], between: string): void {
  if (cycles.length > 0)
    expect.fail(`${cycles.length} import cycles between ${between}:\n${formatCycles(cycles)}`);
}

describe("src/ has no import cycles", () => {
  let imports: readonly Import[];
  beforeAll(async () => {
    imports = await importGraph(REPO);
  });

  it("between files", () => {
    expectNoCycles(findCycles(imports, eachFile), "files of src/");
  });

  it("between the folders of src/shell, its plain files counting as one folder", () => {
    expectNoCycles(findCycles(imports, shellFolder), "folders of src/shell");
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
