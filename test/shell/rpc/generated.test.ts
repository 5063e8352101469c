/**
 * The committed code in src/shell/rpc/gen must be what `npm run proto` generates from proto/: regenerate
 * into a temporary directory with the pinned buf and protoc-gen-es and compare. Any network access
 * fails (the proxy variables point at a closed port), so this also proves generation is offline.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type TempDir, tempDir } from "./helpers.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const GEN = "src/shell/rpc/gen";

let dir: TempDir;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.remove());

const offline = (): NodeJS.ProcessEnv => ({
  ...process.env,
  HTTPS_PROXY: "http://127.0.0.1:9",
  HTTP_PROXY: "http://127.0.0.1:9",
  NO_PROXY: "",
  BUF_CACHE_DIR: join(dir.path, "cache"),
});

const buf = (...args: string[]): string =>
  execFileSync(join(root, "node_modules/.bin/buf"), args, { cwd: root, env: offline(), encoding: "utf8" });

function files(base: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of readdirSync(base, { recursive: true, encoding: "utf8" }))
    if (statSync(join(base, name)).isFile()) out.set(name, readFileSync(join(base, name), "utf8"));
  return out;
}

describe("the generated protobuf code", () => {
  it("is what proto/ generates (run `npm run proto` when this fails)", () => {
    buf("generate", "--output", dir.path);
    const fresh = files(join(dir.path, GEN));
    const committed = files(join(root, GEN));
    expect(fresh.size).toBeGreaterThan(0);
    expect([...committed.keys()].sort()).toEqual([...fresh.keys()].sort());
    for (const [name, text] of fresh) expect(committed.get(name), name).toBe(text);
  });

  it("passes buf lint", () => {
    expect(buf("lint")).toBe("");
  });
});
