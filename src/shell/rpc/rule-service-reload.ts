/**
 * RuleService's reload methods: Reload and PolicySynced call back into the daemon, which reloads the
 * config and rules between two journal rows; a failure leaves the set in force and is answered as
 * `ReloadFailedError`.
 */
import type { ReloadReport } from "../daemon/daemon.js";
import { InvalidArgumentError, ReloadFailedError, SentinelError } from "../errors.js";
import { checkLength } from "./requests.js";
import type { RuleServiceDeps, RuleServiceImpl } from "./rule-service-deps.js";
import { stalePin } from "./rule-service-status.js";
import { serve } from "./status.js";
import { CALLER, operatorOf } from "./tiers.js";

export function reloadMethods(
  deps: Pick<RuleServiceDeps, "reload" | "policySynced">,
): Pick<RuleServiceImpl, "reload" | "policySynced"> {
  return {
    reload: (req, ctx) =>
      serve("Reload", async () => {
        let r: ReloadReport;
        try {
          r = await deps.reload(req.defaults, operatorOf(ctx.values.get(CALLER)));
        } catch (e) {
          throw new ReloadFailedError(e as Error);
        }
        return reloadResponse(r);
      }),

    policySynced: (req, ctx) =>
      serve(`PolicySynced ${req.repo}`, async () => {
        if (req.repo === "")
          throw new InvalidArgumentError("", "PolicySynced needs the repo that was synced");
        checkLength(req.repo, "repo");
        checkLength(req.commit, "commit");
        let r: ReloadReport;
        try {
          r = await deps.policySynced(req.repo, req.commit, operatorOf(ctx.values.get(CALLER)));
        } catch (e) {
          if (e instanceof SentinelError) throw e;
          throw new ReloadFailedError(e as Error);
        }
        return { reload: reloadResponse(r) };
      }),
  };
}

const reloadResponse = (r: ReloadReport) => ({
  ...r,
  disabled: [...r.disabled],
  unknownEnforced: [...r.unknownEnforced],
  stalePins: r.stalePins.map(stalePin),
  needsRestart: [...r.needsRestart],
});
