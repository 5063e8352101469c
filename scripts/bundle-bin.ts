/**
 * `npm run build`'s last step: `dist/shell/cli/bin.cjs`, the `harness` executable, bundled from
 * `src/shell/cli/bin.ts` with the hook forwarder inside it (one CommonJS file: a hook's start pays for
 * no ES module loader and no module resolution). `main.js` and smol-toml stay outside, loaded only
 * when a command other than `hook` runs, or when a hook must read the config.
 */
import { build } from "esbuild";

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
