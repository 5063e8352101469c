#!/usr/bin/env node
/**
 * The `harness` executable. `harness hook …` runs on every tool call of every agent, on the agent's
 * critical path, so it is dispatched here before the CLI (cac and every command's registration) is
 * imported: its import graph is the forwarder's alone. Everything else is `main.ts`.
 */
if (process.argv[2] === "hook") {
  const { runHook } = await import("../agents/hook-forwarder.js");
  process.exitCode = await runHook(process.argv.slice(3), {
    env: process.env,
    stdin: process.stdin,
    out: (text) => process.stdout.write(text),
    err: (line) => process.stderr.write(`${line}\n`),
  });
} else await import("./main.js");
