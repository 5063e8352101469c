/** How a hold is printed: its JSON forms (`holds`, `show`, `explain --harness`, `watch`), its state. */
import { formatDuration } from "../../../core/durations.js";
import type { HoldInfo, HoldRecord } from "../../rpc/gen/harness/v1/rules_pb.js";
import { iso } from "../io.js";

/** A hold record's hold, which the daemon always sends. */
export function holdOf(h: HoldRecord): HoldInfo {
  if (h.hold === undefined) throw new Error("the daemon sent a hold record without its hold");
  return h.hold;
}

export const holdJson = (h: HoldInfo) => ({
  harness: h.harness,
  rule: h.rule,
  hash: h.hash,
  fire_id: h.fireId,
  since: iso(h.sinceMs),
});

/** A hold record as `rules holds --json` and `rules watch --json` print it. */
export const holdRecordJson = (h: HoldRecord) => ({
  ...holdJson(holdOf(h)),
  cooldown: formatDuration(Number(h.cooldownMs)),
  false_since: iso(h.falseSinceMs),
  released_at: iso(h.releasedAtMs),
  release_cause: h.releaseCause === "" ? null : h.releaseCause,
  released_by: h.releasedBy === "" ? null : h.releasedBy,
});

/**
 * The cause of a release, with the operator's label when one of the operators' own control tokens made
 * it (decision 0018): `operator alice`; the first control token's is plain `operator`.
 */
export const releaseWho = (h: HoldRecord): string =>
  h.releasedBy === "" || h.releasedBy === h.releaseCause
    ? h.releaseCause
    : `${h.releaseCause} ${h.releasedBy}`;

export const holdState = (h: HoldRecord): string =>
  h.releasedAtMs !== 0n
    ? `released: ${releaseWho(h)} at ${iso(h.releasedAtMs)}`
    : h.falseSinceMs === 0n
      ? "held"
      : `held (condition false since ${iso(h.falseSinceMs)})`;
