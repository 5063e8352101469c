/**
 * A machine's own homes under `root` for a test or bench process: HOME and the XDG directories, private
 * to the user as harness expects, and the environment that points at them (PATH kept).
 */
import * as fs from "node:fs";
import * as path from "node:path";

export function makeHomes(root: string): NodeJS.ProcessEnv & {
  readonly HOME: string;
  readonly XDG_CONFIG_HOME: string;
  readonly XDG_STATE_HOME: string;
  readonly XDG_RUNTIME_DIR: string;
} {
  const dir = (name: string) => {
    const d = path.join(root, name);
    fs.mkdirSync(d, { recursive: true, mode: 0o700 });
    return d;
  };
  return {
    PATH: process.env.PATH,
    HOME: root,
    XDG_CONFIG_HOME: dir("config"),
    XDG_STATE_HOME: dir("state"),
    XDG_RUNTIME_DIR: dir("run"),
  };
}
