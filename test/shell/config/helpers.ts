import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach } from "vitest";

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh directory with XDG variables pointing inside it, removed after the test. */
export function sandbox(): {
  root: string;
  env: NodeJS.ProcessEnv;
  write: (path: string, text: string) => string;
} {
  const root = mkdtempSync(join(tmpdir(), "harness-config-"));
  made.push(root);
  const env = {
    HOME: join(root, "home"),
    XDG_CONFIG_HOME: join(root, "config"),
    XDG_STATE_HOME: join(root, "state"),
    XDG_RUNTIME_DIR: join(root, "run"),
  };
  const write = (path: string, text: string): string => {
    const file = join(root, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  };
  return { root, env, write };
}
