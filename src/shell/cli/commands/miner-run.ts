/**
 * `harness miner run NAME`: runs rule miner NAME's one-shot once (`miner/miner-run.ts`), as cron or a
 * systemd timer schedules it (docs/rule-miner.md). Control tier: it reads the operator's control token
 * to mint the run's tokens. Exit 0 when the one-shot succeeded, 1 when it failed or timed out. With
 * `--json` its stdout is one JSON document and the one-shot's stdout goes to stderr.
 */
import { fileURLToPath } from "node:url";
import { runMiner } from "../../miner/miner-run.js";
import { failed } from "../client.js";
import { type Common, EXIT, type Io } from "../io.js";
import { clientTarget, controlToken } from "../target.js";

export async function runMinerRun(name: string, options: Common, io: Io): Promise<number> {
  const target = await clientTarget({ ...options, env: io.env, clientDefault: false });
  // A miner's run reads the policy clone and the gateway socket on the daemon's machine.
  if (options.daemon !== undefined) {
    io.err("harness miner run: runs on the daemon's machine, over its socket; --daemon is not taken");
    return EXIT.usage;
  }
  const config = target.config;
  if (config === undefined) {
    io.err("harness miner run: the global config does not load; harness config check says why");
    return EXIT.usage;
  }
  if (!config.memory.ruleMiners.includes(name)) {
    io.err(`harness miner run: ${JSON.stringify(name)} is not listed in [memory] rule_miners`);
    return EXIT.usage;
  }
  const miner = config.memory.miners.find((m) => m.name === name);
  if (miner === undefined) {
    io.err(
      `harness miner run: ${name} has no one-shot: add [memory.miners.${name}] with command = [...] (docs/rule-miner.md)`,
    );
    return EXIT.usage;
  }
  const control = await controlToken(target, "miner run");
  if ("error" in control) {
    io.err(control.error);
    return EXIT.usage;
  }
  try {
    const result = await runMiner({
      miner,
      socketPath: target.socketPath,
      controlToken: control.token,
      harnessCommand: [process.execPath, fileURLToPath(new URL("../main.js", import.meta.url))],
      env: io.env,
      log: io.err,
      // With --json, stdout is the result alone: a reader parses it whatever the one-shot prints.
      oneShotStdout: options.json === true ? "stderr" : "stdout",
    });
    if (options.json === true)
      io.out(
        JSON.stringify({
          run: result.run,
          outcome: result.outcome,
          exit_code: result.exitCode,
          reason: result.reason,
        }),
      );
    return result.outcome === "success" ? EXIT.ok : EXIT.failed;
  } catch (e) {
    return failed("miner run", target.socketPath, e, io);
  }
}
