import { readFileSync } from "node:fs";

/**
 * The package version, from the nearest package.json above this module: `dist/shell/` in a build,
 * `src/shell/` under tsx, `.bench-build/src/shell/` in a bench build (whose own folder has none).
 */
export function packageVersion(): string {
  for (let url = new URL("./package.json", import.meta.url); ; url = new URL("../package.json", url)) {
    try {
      const pkg = JSON.parse(readFileSync(url, "utf8")) as { name?: unknown; version?: unknown };
      if (pkg.name === "harness-rules" && typeof pkg.version === "string") return pkg.version;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
    if (url.pathname === "/package.json") return "0.0.0";
  }
}
