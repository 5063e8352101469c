/** How `rules list` and `rules show` print a rule: its mode, its last fire, its JSON form. */
import { formatDuration } from "../../../core/durations.js";
import type { Level } from "../../../core/rule-file.js";
import { needsEnforce } from "../../../core/rule-set.js";
import { enforcement } from "../../../core/rule-state.js";
import type { RuleInfo, StalePin } from "../../rpc/gen/harness/v1/rules_pb.js";
import { iso, isoOr } from "../io.js";

/** REQ-18's mode: `active`, `shadow until <time>` or `disabled: <reason>`. */
export function modeOf(r: RuleInfo): string {
  if (r.state === "disabled") return `disabled: ${r.disabledReason}`;
  if (r.state === "shadow")
    return r.shadowUntilMs === 0n
      ? "shadow (starts at the next row)"
      : `shadow until ${iso(r.shadowUntilMs)}`;
  return r.state;
}

export function ruleJson(r: RuleInfo) {
  const loaded = r.state !== "disabled" || r.disabledReason === "cost_exceeded";
  return {
    name: r.name,
    source: r.source,
    state: r.state,
    mode: modeOf(r),
    ...(r.state === "disabled"
      ? { disabled_reason: r.disabledReason, disabled_message: r.disabledMessage }
      : {}),
    file: r.file,
    ...(loaded
      ? {
          hash: r.hash,
          on: r.on,
          target: r.target,
          declared_level: r.declaredLevel,
          effective_level: r.effectiveLevel,
          enforced: r.enforced,
          ...(r.stalePins.length === 0 ? {} : { stale_pins: r.stalePins }),
          cooldown: formatDuration(Number(r.cooldownMs)),
          shadow_since: iso(r.shadowSinceMs),
          shadow_until: iso(r.shadowUntilMs),
          estimated_cost: Number(r.estimatedCost),
          fires_24h: r.fires24h,
          fires_7d: r.fires7d,
          suppressed: Number(r.suppressed),
          last_fire: r.lastFireId === "" ? null : { fire_id: r.lastFireId, at: iso(r.lastFireAtMs) },
        }
      : {}),
  };
}

export const lastFire = (r: RuleInfo): string =>
  r.lastFireId === "" ? "-" : `${isoOr(r.lastFireAtMs, "?")} (${r.lastFireId})`;

/** How `enforce` bears on the rule, as `rules show` says it. */
export function enforceStatus(r: RuleInfo): string {
  const declared = r.declaredLevel as Level;
  if (r.stalePins.length > 0 && needsEnforce(declared))
    return `pinned in [memory.rules] enforce to ${r.stalePins.map((h) => `${h.slice(0, 12)}…`).join(", ")}, not this hash: acts at notify, not ${declared}, until pinned again (harness rules enforce ${r.name})`;
  return {
    listed: "listed in [memory.rules] enforce",
    capped: `not in [memory.rules] enforce: acts at notify, not ${declared}`,
    not_needed: "not in [memory.rules] enforce (not needed below hold)",
  }[enforcement(declared, r.enforced)];
}

/** A pin in `enforce` that no longer matches its loaded rule, as reload and doctor say it. */
export function stalePinSentence(p: StalePin): string {
  return `enforce pins ${p.name}@${p.pinnedHash.slice(0, 12)}…, but the loaded ${p.name} has hash ${p.loadedHash}: it is not enforced until pinned again (harness rules enforce ${p.name} prints the new pin)`;
}
