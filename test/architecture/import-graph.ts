/**
 * The imports between the files of a `src/` tree, as dependency-cruiser reads them: with the
 * TypeScript compiler before compilation (`tsPreCompilationDeps`), so an `import type`, an
 * `export type … from` and an `import("…")` type are edges like any other. Only files under `src/`
 * are nodes; packages and Node's modules are left out.
 */
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { cruise } from "dependency-cruiser";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";

/** How an import ties two files: all three count for cycles; the report names the kind. */
export type ImportKind = "static" | "dynamic" | "type-only";

/** One file importing another, both paths from the tree's root (`src/shell/cli.ts`). */
export interface Import {
  readonly from: string;
  readonly to: string;
  readonly kind: ImportKind;
}

/** The repository's tsconfig: its module resolution (`./x.js` → `./x.ts`) is what the tree compiles with. */
const TSCONFIG = fileURLToPath(new URL("../../tsconfig.json", import.meta.url));

/** Every import between files of `root/src`, `root` being the repository or a fixture tree. */
export async function importGraph(root: string): Promise<readonly Import[]> {
  const { output } = await cruise(
    ["src"],
    {
      baseDir: root,
      // Not `includeOnly`: it would also drop a relative import that does not resolve.
      doNotFollow: { path: "node_modules" },
      tsPreCompilationDeps: true,
      tsConfig: { fileName: TSCONFIG },
    },
    undefined,
    { tsConfig: extractTSConfig(TSCONFIG) },
  );
  // A string only when asked for a report format; this asks for none.
  if (typeof output === "string") throw new Error("dependency-cruiser returned a report, not its graph");
  const imports: Import[] = [];
  for (const m of output.modules) {
    if (!m.source.startsWith("src/")) continue;
    for (const d of m.dependencies) {
      // An import that does not resolve would hide any cycle through it: refuse rather than pass.
      if (d.couldNotResolve && d.module.startsWith("."))
        throw new Error(`${path.join(root, m.source)}: cannot resolve ${JSON.stringify(d.module)}`);
      if (!d.resolved.startsWith("src/")) continue;
      const kind: ImportKind = d.dependencyTypes.includes("dynamic-import")
        ? "dynamic"
        : d.dependencyTypes.some((t) => t === "type-only" || t === "type-import")
          ? "type-only"
          : "static";
      imports.push({ from: m.source, to: d.resolved, kind });
    }
  }
  return imports;
}
