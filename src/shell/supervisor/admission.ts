/**
 * The hold contract's client: asks the daemon's `RuleService.CheckAdmission` whether a harness may start
 * a run, and admits when no daemon answers (contract item 1 in `reference-supervisor.ts` says why).
 */

import type { RuleClient } from "../rpc/client.js";
import { unreachable } from "../rpc/client.js";
import { SupervisorError } from "./errors.js";

export interface Admission {
  readonly admitted: boolean;
  readonly rules: readonly string[];
  readonly message: string;
}

/**
 * `harness`'s admission; `onUnavailable` hears the error when no daemon answered and admission was
 * granted. A daemon that answers with an error is a fault, thrown as a `SupervisorError`.
 */
export async function checkAdmission(
  rules: RuleClient,
  harness: string,
  onUnavailable: (error: string) => void,
): Promise<Admission> {
  try {
    const res = await rules.checkAdmission({ harness });
    return { admitted: res.admitted, rules: res.holds.map((h) => h.rule), message: res.message };
  } catch (e) {
    if (!unreachable(e))
      throw new SupervisorError(harness, `CheckAdmission failed: ${(e as Error).message}`, { cause: e });
    onUnavailable((e as Error).message);
    return { admitted: true, rules: [], message: "" };
  }
}
