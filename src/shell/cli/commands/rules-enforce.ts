/**
 * `harness rules enforce NAME`: prints the `[memory.rules] enforce` line that lets a loaded hold or stop
 * rule act at its level, pinned to the content hash the daemon loaded (`NAME@HASH`), and the file it
 * goes in. It writes nothing: REQ-10 leaves that one edit to the operator. While the rule shadows, it
 * says so and what turns shadowing off (for every rule: no key skips one rule's shadow). Exit 0 when it
 * printed the edit or none is needed; 1 for a rule that is not loaded or disabled at load; 2 when the
 * global config does not load.
 */
import { readFile } from "node:fs/promises";
import { formatDuration } from "../../../core/durations.js";
import { formatEnforceEntry, parseEnforceEntry } from "../../../core/enforce-entry.js";
import type { Level } from "../../../core/rule-file.js";
import { needsEnforce } from "../../../core/rule-set.js";
import { readGlobalConfig } from "../../config/global-config.js";
import { globalConfigPath } from "../../config/paths.js";
import { withClient } from "../client.js";
import { type Common, EXIT, type Io, iso } from "../io.js";
import { type ConfigEdit, editText, keyEdit } from "../render/config-edit.js";
import { printed } from "../render/printable.js";

const RULES_TABLE = ["memory", "rules"] as const;

export function runEnforce(name: string, options: Common, io: Io): Promise<number> {
  return withClient("rules enforce", options, io, async (client) => {
    const r = (await client.getRule({ name })).rule;
    if (r === undefined) throw new Error(`the daemon sent no rule for ${name}`);
    if (r.hash === "") {
      io.err(
        `harness rules enforce: ${name} is disabled (${r.disabledReason}: ${r.disabledMessage}): there is no loaded content to enforce`,
      );
      return EXIT.failed;
    }
    const out = printed(io.out);
    if (!needsEnforce(r.declaredLevel as Level)) {
      out(
        `${name} is level ${r.declaredLevel}: annotate and notify act without enforce, so there is nothing to add`,
      );
      return EXIT.ok;
    }
    const entry = formatEnforceEntry({ name, hash: r.hash });
    const file = options.config ?? globalConfigPath(io.env);
    const text = await readFile(file, "utf8").catch(() => "");
    const config = await readGlobalConfig(file, io.env);
    if (!config.ok) {
      // The list it holds is unknown, and a line printed without it would drop its entries.
      io.err(`harness rules enforce: ${file} does not load (harness config check says why): fix it first`);
      return EXIT.usage;
    }
    const current = config.config.memory.rules.enforce;
    const shadowPeriod = config.config.memory.rules.shadowPeriod;
    // Re-pinning replaces the name's old entries; every other entry stays as written.
    const isMine = (e: string) => {
      const p = parseEnforceEntry(e);
      return p.ok && p.entry.name === name;
    };
    const list = [...current.filter((e) => !isMine(e)), entry];
    const mine = current.filter(isMine);
    const already = mine.length === 1 && mine[0] === entry && r.enforced;
    const enforceEdit = keyEdit(file, text, RULES_TABLE, "enforce", `enforce = ${tomlList(list)}`);
    const shadowEdit =
      r.state === "shadow"
        ? keyEdit(file, text, RULES_TABLE, "shadow_period", 'shadow_period = "0s"')
        : undefined;
    if (options.json === true) {
      io.out(
        JSON.stringify({
          rule: name,
          source: r.source,
          level: r.declaredLevel,
          hash: r.hash,
          entry,
          file,
          enforce: list,
          already_enforced: already,
          shadow_until: r.state === "shadow" ? iso(r.shadowUntilMs) : null,
          edits: [...(already ? [] : [enforceEdit]), ...(shadowEdit === undefined ? [] : [shadowEdit])],
        }),
      );
      return EXIT.ok;
    }
    if (already) out(`${name} is already enforced, pinned to its loaded hash ${r.hash}: nothing to add`);
    else {
      out(
        `${name} (${r.source}, level ${r.declaredLevel}, hash ${r.hash}) acts at ${r.declaredLevel} once enforce lists it;`,
      );
      for (const line of editText(enforceEdit)) out(line);
      out(
        `The pin (@${r.hash.slice(0, 12)}…) keeps ${name} enforced only while its content is the one loaded now:`,
      );
      out(
        `a sync that changes its on, when, level, target or cooldown ends the enforcement until you pin it again`,
      );
      out(`(harness doctor lists stale pins). "${name}" alone enforces whatever content the name has.`);
      out("");
    }
    if (shadowEdit !== undefined)
      for (const line of shadowText(name, r.shadowUntilMs, shadowPeriod, shadowEdit)) out(line);
    out(`then: harness reload, and harness doctor lists ${name} as enforced`);
    return EXIT.ok;
  });
}

/** REQ-9's shadow, said plainly: what it is, until when, and the one key that turns it off (for all). */
function shadowText(name: string, untilMs: bigint, period: number, edit: ConfigEdit): string[] {
  const until = iso(untilMs);
  return [
    `${name} arrived by sync, so it shadows first (shadow_period, ${formatDuration(period)}): it takes no action at any level ${
      until === null ? "until that long after the next journal row" : `until ${until}`
    }.`,
    "No key skips the shadow of one rule. To try it now, turn shadowing off for every rule (then remove",
    "the line: the shadow lets a rule that arrives by sync show on live rows what it would do before it acts):",
    ...editText(edit),
  ];
}

/** A TOML array of basic strings; JSON's escapes are TOML's. */
const tomlList = (items: readonly string[]): string => `[${items.map((s) => JSON.stringify(s)).join(", ")}]`;
