/** `harness rules holds [--harness NAME] [--released] [--limit N]`: holds in force, or also released ones. */
import { withClient } from "../client.js";
import { type Common, EXIT, type Io, isoOr, table } from "../io.js";
import { holdOf, holdRecordJson, holdState } from "../render/holds.js";
import { printable } from "../render/printable.js";

/** `harness rules holds [--harness NAME] [--released]`. */
export function runHolds(
  options: Common & {
    readonly harness?: string | undefined;
    readonly released?: boolean | undefined;
    readonly limit?: number | undefined;
  },
  io: Io,
): Promise<number> {
  return withClient("rules holds", options, io, async (client) => {
    const res = await client.listHolds({
      harness: options.harness ?? "",
      includeReleased: options.released === true,
      limit: options.limit ?? 0,
    });
    if (options.json === true) {
      io.out(
        JSON.stringify({
          holds: res.holds.map(holdRecordJson),
          truncated: res.truncated,
        }),
      );
      return EXIT.ok;
    }
    if (res.holds.length === 0) {
      io.out(
        options.harness === undefined
          ? "no holds in force"
          : `${printable(options.harness)}: no holds in force`,
      );
      return EXIT.ok;
    }
    for (const line of table(
      ["HARNESS", "RULE", "SINCE", "FIRE", "STATE"],
      res.holds.map((h) => {
        const hold = holdOf(h);
        return [hold.harness, hold.rule, isoOr(hold.sinceMs, "?"), hold.fireId, holdState(h)];
      }),
    ))
      io.out(line);
    if (res.truncated) io.out("(more released holds than shown; use --limit)");
    return EXIT.ok;
  });
}
