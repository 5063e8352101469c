/**
 * The command hook's launcher (`hook-client.ts`): the native client built with the machine's compiler,
 * once per source, or the sh script where none builds it, with the reason install prints.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { hookClientDir, hookLauncher } from "../../../../src/shell/agents/install/hook-client.js";

const FORWARDER = fileURLToPath(new URL("../../../../src/shell/agents/forwarder/", import.meta.url));
const files = {
  node: "/usr/bin/node",
  bin: "/opt/harness/dist/shell/cli/bin.cjs",
  script: path.join(FORWARDER, "harness-hook.sh"),
  clientSource: path.join(FORWARDER, "hook-client.c"),
};

const homes: string[] = [];
function envWith(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "harness-hook-client-"));
  homes.push(home);
  return { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: path.join(home, "state"), ...extra };
}
afterEach(() => {
  for (const h of homes.splice(0)) fs.rmSync(h, { recursive: true, force: true });
});

describe("The command hook's launcher", () => {
  it("builds the native client once per source, private to the user, and reuses it", () => {
    const env = envWith();
    const first = hookLauncher(env, files, false);
    expect(first.kind).toBe("native");
    const [client, ...rest] = first.launcher;
    expect(rest).toEqual([files.node, files.bin]);
    expect(path.dirname(client as string)).toBe(hookClientDir(env));
    expect(path.basename(client as string)).toMatch(/^hook-client-[0-9a-f]{16}$/);
    expect(fs.statSync(client as string).mode & 0o777).toBe(0o700);
    const built = fs.statSync(client as string).mtimeMs;
    expect(hookLauncher(env, files, false).launcher).toEqual(first.launcher);
    expect(fs.statSync(client as string).mtimeMs).toBe(built);
    expect(fs.readdirSync(hookClientDir(env))).toEqual([path.basename(client as string)]);
  });

  it("a dry run names the client it would build and builds nothing", () => {
    const env = envWith();
    expect(hookLauncher(env, files, true).kind).toBe("native");
    expect(fs.existsSync(hookClientDir(env))).toBe(false);
  });

  it("with no compiler, or one that fails, the sh script runs the hook, install says why, and no half binary is left", () => {
    const missing = hookLauncher(envWith({ CC: "no-such-cc-here" }), files, false);
    expect(missing).toEqual({
      kind: "sh",
      launcher: ["/bin/sh", files.script, files.node, files.bin],
      why: "no C compiler (no-such-cc-here) on PATH",
    });
    const env = envWith({ CC: "false" });
    const failing = hookLauncher(env, files, false);
    expect(failing.kind).toBe("sh");
    expect(failing.why).toBe("false failed");
    expect(fs.readdirSync(hookClientDir(env))).toEqual([]);
  });
});
