/**
 * `harness rules admission <harness>` (the supervisor's check before every spawn, restart, trigger and
 * scheduled firing) and `harness rules clear <harness> [--rule <name>]` (the operator's release, with
 * the control token, in `../clear-hold.ts`), both through `RuleService`.
 */
import { ruleClient } from "../../rpc/client.js";
import { clearHold } from "../clear-hold.js";
import { failed } from "../client.js";
import { type Common, EXIT, type Io } from "../io.js";
import { clientTarget, readToken } from "../target.js";

/**
 * Exit 0 admitted, 1 held (the refusal names the rule and the clear command), 2 a name the daemon
 * refuses, 3 no daemon, 4 any other error.
 */
export async function runAdmission(harness: string, options: Common, io: Io): Promise<number> {
  const target = await clientTarget({ ...options, env: io.env });
  const read = await readToken(target, "rules admission");
  if ("error" in read) {
    io.err(read.error);
    return EXIT.error;
  }
  try {
    const res = await ruleClient(target.rpc, read.token).checkAdmission({ harness });
    if (options.json === true)
      io.out(
        JSON.stringify({
          harness,
          admitted: res.admitted,
          message: res.message,
          holds: res.holds.map((h) => ({
            rule: h.rule,
            hash: h.hash,
            fire_id: h.fireId,
            since: new Date(Number(h.sinceMs)).toISOString(),
          })),
        }),
      );
    else io.out(res.admitted ? `${harness}: admitted` : `${harness}: refused: ${res.message}`);
    return res.admitted ? EXIT.ok : EXIT.failed;
  } catch (e) {
    return failed("rules admission", target.where, e, io);
  }
}

/** `harness rules clear <harness> [--rule <name>]`: the release `harness demo`'s operator runs too. */
export async function runClear(
  harness: string,
  options: Common & { readonly rule?: string | undefined },
  io: Io,
): Promise<number> {
  return clearHold(harness, options, io);
}
