/**
 * `npm run build`'s last step: `dist/shell/cli/bin.cjs`, the `harness` executable, bundled from
 * `src/shell/cli/bin.ts` with the hook forwarder inside it (one CommonJS file: a hook's start pays for
 * no ES module loader and no module resolution). `main.js` and smol-toml stay outside, loaded only
 * when a command other than `hook` runs, or when a hook must read the config. Beside it, the command
 * hook's fast paths, `harness-hook.sh` and `hook-client.c` (compiled by `harness agents install`), copied
 * as they are (tsc copies neither).
 */
import { copyFileSync } from "node:fs";
import { build } from "esbuild";

for (const file of ["harness-hook.sh", "hook-client.c"])
  copyFileSync(`src/shell/agents/forwarder/${file}`, `dist/shell/agents/forwarder/${file}`);

await build({
  entryPoints: ["src/shell/cli/bin.ts"],
  outfile: "dist/shell/cli/bin.cjs",
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  external: ["./main.js", "smol-toml"],
  logLevel: "warning",
});
