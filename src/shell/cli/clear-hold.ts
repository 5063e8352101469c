/**
 * The operator's release of a hold through `RuleService.ClearHold`, with the control token, and what it
 * prints. `harness rules clear` runs it, and so does `harness demo`'s operator.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { ruleClient } from "../rpc/client.js";
import { failed } from "./client.js";
import { type Common, EXIT, type Io } from "./io.js";
import { clientTarget, controlToken } from "./target.js";

/**
 * Releases `harness`'s holds (only `rule`'s when given). Exit 0 released (nothing to release included),
 * 1 a hold the daemon does not find, 2 no control token, 3 no daemon, else as the daemon's error says.
 */
export async function clearHold(
  harness: string,
  options: Common & { readonly rule?: string | undefined },
  io: Io,
): Promise<number> {
  const target = await clientTarget({ ...options, env: io.env });
  const control = await controlToken(target, "rules clear");
  if ("error" in control) {
    io.err(control.error);
    return EXIT.usage;
  }
  try {
    const res = await ruleClient(target.rpc, control.token).clearHold({
      harness,
      rule: options.rule ?? "",
    });
    if (options.json === true)
      io.out(
        JSON.stringify({ harness, released: res.released.map((h) => ({ rule: h.rule, fire_id: h.fireId })) }),
      );
    else
      for (const h of res.released)
        io.out(`released ${h.harness}: hold by rule ${h.rule} (fire ${h.fireId})`);
    return EXIT.ok;
  } catch (e) {
    if (e instanceof ConnectError && e.code === Code.NotFound) {
      io.err(`harness rules clear: ${e.rawMessage}`);
      return EXIT.failed;
    }
    return failed("rules clear", target.where, e, io);
  }
}
