/**
 * `harness rules resume <run>`: the operator's release of a stopped hook-fed run, through
 * `AgentService.ResumeRun` with the control token. The run stays stopped and closed; its session's next
 * SessionStart opens a new run (docs/agents-enforcement.md, "A run's life").
 */
import { agentClient } from "../../rpc/client.js";
import { failed } from "../client.js";
import { type Common, EXIT, type Io } from "../io.js";
import { clientTarget, controlToken } from "../target.js";

/**
 * Exit 0 released (released before included), 1 a run with no stop, 2 no control token, 3 no daemon,
 * else as the daemon's error says.
 */
export async function runResume(run: string, options: Common, io: Io): Promise<number> {
  const target = await clientTarget({ ...options, env: io.env });
  const control = await controlToken(target, "rules resume");
  if ("error" in control) {
    io.err(control.error);
    return EXIT.usage;
  }
  try {
    const res = await agentClient(target.rpc, control.token).resumeRun({ run });
    if (!res.stopped) {
      io.err(`harness rules resume: ${run} is not a stopped run`);
      return EXIT.failed;
    }
    const by = res.rule;
    if (options.json === true)
      io.out(
        JSON.stringify({ run, harness: res.harness, rule: by, fire_id: res.fireId, released: res.released }),
      );
    else
      io.out(
        `${res.released ? "released" : "already released"} ${run}: stop by ${by} (fire ${res.fireId}); the session's next start opens a new run`,
      );
    return EXIT.ok;
  } catch (e) {
    return failed("rules resume", target.where, e, io);
  }
}
