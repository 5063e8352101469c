/**
 * The CEL parser loads chevrotain from the bundle the package ships (`src/cel/parser/chevrotain.ts`):
 * it must be the same library as the package's entry, not a stale or partial copy.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { CHEVROTAIN_BUNDLE } from "../../src/cel/parser/chevrotain.js";

describe("chevrotain's bundle", () => {
  it("is the package's version and exports what its entry exports", async () => {
    const bundle = (await import(pathToFileURL(CHEVROTAIN_BUNDLE).href)) as Record<string, unknown>;
    const entry = (await import("chevrotain")) as Record<string, unknown>;
    const pkgFile = path.join(path.dirname(CHEVROTAIN_BUNDLE), "..", "package.json");
    const pkg = JSON.parse(fs.readFileSync(pkgFile, "utf8")) as { name: string; version: string };
    expect(pkg.name).toBe("chevrotain");
    expect(bundle.VERSION).toBe(pkg.version);
    expect(entry.VERSION).toBe(pkg.version);
    expect(Object.keys(bundle).sort()).toEqual(Object.keys(entry).sort());
  });
});
