/** `harness rules list`: every rule of the set in force, loaded or disabled. */
import { withClient } from "../client.js";
import { type Common, EXIT, type Io, table } from "../io.js";
import { lastFire, modeOf, ruleJson } from "../render/rules.js";

export function runList(options: Common, io: Io): Promise<number> {
  return withClient("rules list", options, io, async (client) => {
    const { rules } = await client.listRules({});
    if (options.json === true) {
      io.out(JSON.stringify({ rules: rules.map(ruleJson) }));
      return EXIT.ok;
    }
    const rows = rules.map((r) => [
      r.name,
      r.source,
      r.hash === "" ? "-" : r.hash.slice(0, 12),
      modeOf(r),
      r.declaredLevel === "" ? "-" : r.declaredLevel,
      r.effectiveLevel === "" ? "-" : r.effectiveLevel,
      r.hash === "" ? "-" : `${r.fires24h}/${r.fires7d}`,
      lastFire(r),
    ]);
    for (const line of table(
      ["NAME", "SOURCE", "HASH", "MODE", "DECLARED", "EFFECTIVE", "FIRES 24H/7D", "LAST FIRE"],
      rows,
    ))
      io.out(line);
    return EXIT.ok;
  });
}
