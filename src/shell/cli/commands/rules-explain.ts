/**
 * `harness rules explain <fire-id>` (REQ-18: the rule and hash, the row and now, each primitive call,
 * the level derivation, the action outcome) and `harness rules explain --harness <name>` (its holds in
 * force, each fire explained, how each can end, then its fires).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { formatDuration } from "../../../core/durations.js";
import { clearCommand } from "../../../core/held-sentence.js";
import type { HoldRecord } from "../../rpc/gen/harness/v1/rules_pb.js";
import { withClient } from "../client.js";
import { type Common, EXIT, type Io, iso, isoOr, table } from "../io.js";
import { explanationJson, explanationLines, fireJson } from "../render/fires.js";
import { holdJson, holdOf } from "../render/holds.js";
import { printed } from "../render/printable.js";

/** `harness rules explain <fire-id>`. */
export function runExplainFire(fireId: string, options: Common, io: Io): Promise<number> {
  return withClient("rules explain", options, io, async (client) => {
    const x = await client.explainFire({ fireId });
    if (options.json === true) io.out(JSON.stringify(explanationJson(x)));
    else for (const line of explanationLines(x)) printed(io.out)(line);
    return EXIT.ok;
  });
}

/** How a hold in force can end (REQ-11): its condition on ticks, `clear`, a reload. */
function releaseWays(h: HoldRecord, primitiveCalls: number | undefined): string[] {
  const hold = holdOf(h);
  const cooldown = formatDuration(Number(h.cooldownMs));
  const condition =
    primitiveCalls === 0
      ? `never on its own: ${hold.rule}'s when calls no primitive, so it stays true for the firing event`
      : `on its own once ${hold.rule}'s when has been false on every tick for ${cooldown}${
          h.falseSinceMs === 0n ? " (it is true now)" : ` (false since ${iso(h.falseSinceMs)})`
        }`;
  return [
    condition,
    `by hand: ${clearCommand(hold.harness, hold.rule)}`,
    `by a reload that leaves ${hold.rule} absent, disabled, changed in hash or out of [memory.rules] enforce`,
  ];
}

/** `harness rules explain --harness <name>`: its holds in force, each fire explained, then its fires. */
export function runExplainHarness(
  harness: string,
  options: Common & { readonly limit?: number | undefined },
  io: Io,
): Promise<number> {
  return withClient("rules explain", options, io, async (client) => {
    const { holds } = await client.listHolds({ harness });
    const explained = [];
    for (const h of holds) {
      const hold = holdOf(h);
      const explanation = await client.explainFire({ fireId: hold.fireId }).catch((e: unknown) => {
        // A hold outlives nothing it needs: its fire is in the log. Say so rather than hide the hold.
        if (e instanceof ConnectError && e.code === Code.NotFound) return undefined;
        throw e;
      });
      const rule = await client.getRule({ name: hold.rule }).catch((e: unknown) => {
        // The holding rule may have left the set since; its hold is then released at the next reload.
        if (e instanceof ConnectError && e.code === Code.NotFound) return undefined;
        throw e;
      });
      explained.push({ h, hold, explanation, release: releaseWays(h, rule?.primitiveCalls) });
    }
    const fires = await client.listFires({ harness, limit: options.limit ?? 0 });
    if (options.json === true) {
      io.out(
        JSON.stringify({
          harness,
          holds: explained.map(({ h, hold, explanation, release }) => ({
            ...holdJson(hold),
            false_since: iso(h.falseSinceMs),
            fire: explanation === undefined ? null : explanationJson(explanation),
            release,
          })),
          fires: fires.fires.map(fireJson),
          truncated: fires.truncated,
        }),
      );
      return EXIT.ok;
    }
    const out = printed(io.out);
    out(
      holds.length === 0
        ? `${harness}: no hold in force`
        : `${harness}: ${holds.length} hold${holds.length === 1 ? "" : "s"} in force`,
    );
    for (const { hold, explanation, release } of explained) {
      out("");
      out(`hold by rule ${hold.rule} since ${isoOr(hold.sinceMs, "?")}`);
      if (explanation === undefined) out(`  its fire ${hold.fireId} is not in the fire log`);
      else for (const line of explanationLines(explanation)) out(`  ${line}`);
      out("  released:");
      for (const way of release) out(`    ${way}`);
    }
    out("");
    out(
      fires.fires.length === 0
        ? `${harness}: no fires`
        : `${harness}: fires, newest first${fires.truncated ? ` (the newest ${fires.fires.length})` : ""}`,
    );
    if (fires.fires.length === 0) return EXIT.ok;
    for (const line of table(
      ["FIRE", "AT", "RULE", "MODE", "LEVEL", "ACTION", "OUTCOME"],
      fires.fires.map((f) => [
        f.fireId,
        isoOr(f.atMs, "?"),
        f.rule,
        f.mode,
        f.effectiveLevel,
        f.action,
        f.actions.map((a) => `${a.action} ${a.state}`).join(", ") || "-",
      ]),
    ))
      out(line);
    return EXIT.ok;
  });
}
