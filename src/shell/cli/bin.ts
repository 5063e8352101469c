#!/usr/bin/env node
/**
 * The `harness` executable, built by `scripts/bundle-bin.ts` into one CommonJS file, `dist/shell/cli/bin.cjs`.
 * `harness hook …` runs on every tool call of every agent, on the agent's critical path, so it is
 * dispatched here before the CLI (cac and every command's registration) is imported, and the forwarder
 * is bundled into this file: no ES module loader, no module resolution, only Node's own start. Every
 * other command is `main.ts`, imported as the ES module it is.
 */
if (process.argv[2] === "hook") {
  void import("../agents/hook-forwarder.js")
    .then(({ runHook }) =>
      runHook(process.argv.slice(3), {
        env: process.env,
        stdin: process.stdin,
        out: (text) => process.stdout.write(text),
        err: (line) => process.stderr.write(`${line}\n`),
      }),
    )
    .then((code) => {
      process.exitCode = code;
    });
} else void import("./main.js");
