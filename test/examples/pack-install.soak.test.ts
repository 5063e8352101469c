/**
 * Run by `npm run soak` only (PROPERTY_RUNS_FACTOR set): the package as a user gets it. `npm pack` of
 * this checkout, `npm install -g` of that tarball into a temporary prefix (which compiles better-sqlite3
 * where no prebuilt binary can be fetched: minutes), and the installed `harness demo` runs the starter
 * rules to the end, from a directory outside the checkout, with nothing of the checkout on its path.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";

const SOAK = process.env.PROPERTY_RUNS_FACTOR !== undefined;
const CHECKOUT = fileURLToPath(new URL("../../", import.meta.url));
const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "harness-pack-")));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

it.skipIf(!SOAK)(
  "a packed tarball installed with npm install -g into a temporary prefix runs harness demo",
  () => {
    const npm = (args: string[], cwd: string) => {
      const r = spawnSync("npm", args, {
        cwd,
        encoding: "utf8",
        env: { ...process.env, npm_config_loglevel: "error" },
      });
      expect(r.status, `npm ${args.join(" ")}\n${r.stderr}`).toBe(0);
      return r.stdout;
    };
    npm(["pack", "--pack-destination", root], CHECKOUT);
    const [tarball] = fs.readdirSync(root).filter((f) => f.endsWith(".tgz"));
    if (tarball === undefined) throw new Error("npm pack made no tarball");
    const prefix = path.join(root, "prefix");
    const t0 = Date.now();
    npm(["install", "-g", "--prefix", prefix, path.join(root, tarball)], root);
    console.log(`pack-install: npm install -g took ${((Date.now() - t0) / 1000).toFixed(0)} s`);

    const home = path.join(root, "home");
    fs.mkdirSync(home);
    const demo = spawnSync(path.join(prefix, "bin", "harness"), ["demo", "--seconds", "5"], {
      cwd: home,
      encoding: "utf8",
      env: {
        PATH: `${path.join(prefix, "bin")}:${path.dirname(process.execPath)}:/usr/bin:/bin`,
        HOME: home,
      },
    });
    expect({ code: demo.status, err: demo.stderr }).toEqual({ code: 0, err: "" });
    expect(demo.stdout).toMatch(/\d+ starter rules fired/);
  },
  1_800_000,
);
