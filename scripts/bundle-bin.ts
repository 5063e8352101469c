/**
 * `npm run build`'s last step: `dist/shell/cli/bin.cjs`, the `harness` executable, bundled from
 * `src/shell/cli/bin.ts` with the hook forwarder inside it (one CommonJS file: a hook's start pays for
 * no ES module loader and no module resolution). `main.js` and smol-toml stay outside, loaded only
 * when a command other than `hook` runs, or when a hook must read the config. Beside it, the command
 * hook's fast path, `harness-hook.sh`, copied as it is (tsc copies no shell scripts).
 */
import { copyFileSync } from "node:fs";
import { build } from "esbuild";

copyFileSync(
  "src/shell/agents/forwarder/harness-hook.sh",
  "dist/shell/agents/forwarder/harness-hook.sh",
);

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
