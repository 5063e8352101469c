/** `harness rules show <name>`: list's row plus the file, `when`, cost, shadow_since, enforce and holds. */
import { formatDuration } from "../../../core/durations.js";
import { withClient } from "../client.js";
import { type Common, EXIT, type Io, isoOr } from "../io.js";
import { holdJson } from "../render/holds.js";
import { printable } from "../render/printable.js";
import { enforceStatus, lastFire, modeOf, ruleJson } from "../render/rules.js";

export function runShow(name: string, options: Common, io: Io): Promise<number> {
  return withClient("rules show", options, io, async (client) => {
    const res = await client.getRule({ name });
    const r = res.rule;
    if (r === undefined) throw new Error(`the daemon sent no rule for ${name}`);
    const warnings =
      r.declaredLevel === "hold" && res.primitiveCalls === 0 && r.state !== "disabled"
        ? [
            `${name} is a hold rule whose when calls no count, distinct or exists: its hold never clears on its own, only by harness rules clear`,
          ]
        : [];
    if (options.json === true) {
      io.out(
        JSON.stringify({
          ...ruleJson(r),
          ...(res.when === "" ? {} : { when: res.when, description: res.description, message: res.message }),
          primitive_calls: res.primitiveCalls,
          holds: res.holds.map(holdJson),
          warnings,
        }),
      );
      return EXIT.ok;
    }
    const lines: [string, string][] = [
      ["name", r.name],
      ["source", r.source],
      ["file", r.file],
      ["mode", modeOf(r)],
    ];
    if (r.state === "disabled") lines.push(["disabled", `${r.disabledReason}: ${r.disabledMessage}`]);
    if (r.hash !== "") {
      lines.push(
        ["description", res.description],
        ["on", r.on],
        ["target", r.target],
        ["level", `declared ${r.declaredLevel}, effective ${r.effectiveLevel}`],
        ["enforce", enforceStatus(r)],
        ["hash", r.hash],
        [
          "shadow_since",
          r.source === "starter" ? "- (starter rules skip shadow)" : isoOr(r.shadowSinceMs, "-"),
        ],
        ["cooldown", formatDuration(Number(r.cooldownMs))],
        ["cost", `estimated at most ${r.estimatedCost} units (limit 5000)`],
        ["fires", `${r.fires24h} in 24h, ${r.fires7d} in 7d; ${r.suppressed} suppressed by cooldown`],
        ["last fire", lastFire(r)],
        ["message", res.message],
        ["when", res.when],
      );
      lines.push([
        "holds",
        res.holds.length === 0
          ? "none"
          : res.holds.map((h) => `${h.harness} since ${isoOr(h.sinceMs, "?")} (${h.fireId})`).join("; "),
      ]);
    }
    const width = Math.max(...lines.map(([k]) => k.length));
    // A `when` may span lines; each is made printable on its own.
    for (const [k, v] of lines) io.out(`${k.padEnd(width)}  ${v.split("\n").map(printable).join("\n")}`);
    for (const w of warnings) io.out(`warning: ${w}`);
    return EXIT.ok;
  });
}
