/**
 * `harness reload [--defaults]`: the daemon rereads its config and rule set and swaps it in between two
 * rows. A config file that is gone is an error (the config in force stays, and `doctor` fails until a
 * good reload) unless `--defaults` asks for all defaults: a mistaken `mv` must not release holds or
 * refuse producers.
 */
import { ConnectError } from "@connectrpc/connect";
import { ruleClient, unreachable } from "../../rpc/client.js";
import { EXIT } from "../io.js";
import { stalePinSentence } from "../render/rules.js";
import { clientTarget, controlToken, noAnswer } from "../target.js";

export async function runReload(
  options: {
    readonly socket?: string | undefined;
    readonly config?: string | undefined;
    readonly json?: boolean | undefined;
    readonly defaults?: boolean | undefined;
  },
  io: {
    readonly env: NodeJS.ProcessEnv;
    readonly out: (line: string) => void;
    readonly err: (line: string) => void;
  },
): Promise<number> {
  const target = await clientTarget({ ...options, env: io.env });
  const control = await controlToken(target, "reload");
  if ("error" in control) {
    io.err(control.error);
    return EXIT.usage;
  }
  try {
    const r = await ruleClient(target.rpc, control.token).reload({
      defaults: options.defaults === true,
    });
    if (options.json === true)
      io.out(
        JSON.stringify({
          loaded: r.loaded,
          disabled: r.disabled.map((d) => ({ name: d.name, reason: d.reason, message: d.message })),
          unknown_enforced: r.unknownEnforced,
          stale_pins: r.stalePins.map((p) => ({ name: p.name, pinned: p.pinnedHash, loaded: p.loadedHash })),
          released: r.released,
          needs_restart: r.needsRestart,
        }),
      );
    else {
      io.out(
        `reloaded: ${r.loaded} rules loaded, ${r.disabled.length} disabled, ${r.released} holds released`,
      );
      for (const d of r.disabled) io.out(`  disabled ${d.name}: ${d.reason}: ${d.message}`);
      for (const n of r.unknownEnforced) io.out(`  warning: enforce names ${n}, which is not loaded`);
      for (const p of r.stalePins) io.out(`  warning: ${stalePinSentence(p)}`);
      if (r.needsRestart.length > 0)
        io.out(
          `  warning: changed, but needs a restart: ${r.needsRestart.join(", ")} (the daemon keeps the values it started with)`,
        );
    }
    return EXIT.ok;
  } catch (e) {
    if (unreachable(e)) {
      io.err(`harness reload: ${noAnswer(target.where)}`);
      return EXIT.unreachable;
    }
    io.err(`harness reload: ${e instanceof ConnectError ? e.rawMessage : (e as Error).message}`);
    return EXIT.error;
  }
}
