/**
 * `harness doctor`'s reload row: a reload that failed (`harness reload`, or a SIGHUP whose
 * failure only the log says) leaves the daemon on the config loaded before it, while the file on disk
 * says something else; doctor fails, naming the error, until a reload succeeds.
 */
import type { GetStatusResponse } from "../../rpc/gen/harness/v1/rules_pb.js";
import { iso } from "../io.js";
import { printable } from "../render/printable.js";

export interface ReloadCheck {
  readonly name: "reload";
  readonly status: "pass" | "fail";
  readonly detail: string;
  readonly findings: readonly { readonly status: "fail"; readonly message: string }[];
}

export function reloadCheck(s: GetStatusResponse): ReloadCheck {
  if (s.lastReloadError === "")
    return { name: "reload", status: "pass", detail: "the last reload, if any, succeeded", findings: [] };
  return {
    name: "reload",
    status: "fail",
    detail: `the last reload failed at ${iso(s.lastReloadFailedAtMs)}; the daemon runs the config it loaded before; fix the config and run harness reload`,
    // A config error is several lines (one per problem): a finding each.
    findings: s.lastReloadError
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => ({ status: "fail", message: printable(line) })),
  };
}
