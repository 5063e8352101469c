#!/usr/bin/env node
/**
 * The `harness` executable, built by `scripts/bundle-bin.ts` into one CommonJS file, `dist/shell/cli/bin.cjs`.
 * `harness hook …` runs on every tool call of every agent, on the agent's critical path, so it is
 * dispatched here before the CLI (cac and every command's registration) is imported, and the forwarder
 * is bundled into this file: no ES module loader, no module resolution, only Node's own start. Its
 * stdin and stdout are plain reads and writes (`hook-stdio.ts`), and it exits as soon as its answer is
 * written, rather than waiting for Node to tear down an event loop it no longer uses. Every other
 * command is `main.ts`, imported as the ES module it is.
 */
if (process.argv[2] === "hook") {
  void Promise.all([
    import("../agents/forwarder/hook-forwarder.js"),
    import("../agents/forwarder/hook-stdio.js"),
  ]).then(async ([{ runCommandHook }, { readStdin, writeAll }]) => {
    const writes: Promise<void>[] = [];
    const code = await runCommandHook(process.argv.slice(3), {
      env: process.env,
      stdin: (limit) => readStdin(limit, () => process.stdin),
      out: (text) => writes.push(writeAll(1, text, () => process.stdout)),
      err: (line) => writes.push(writeAll(2, `${line}\n`, () => process.stderr)),
    });
    await Promise.all(writes);
    process.exit(code);
  });
} else void import("./main.js");
