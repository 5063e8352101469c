/**
 * `harness doctor`'s `listen` row, against a squatter on the port: when the config names `[agents] listen`,
 * the endpoint there must prove to be the daemon answering on the socket (`agents/ingest/hook-challenge.ts`).
 * Another process answering there fails doctor: Claude Code's http hooks would post their tokens to
 * it. Nothing listening warns (the daemon may run another config until a restart).
 */
import { proveHookEndpoint } from "../../agents/ingest/hook-challenge.js";
import type { GlobalConfig } from "../../config/global-config.js";
import { printable } from "../render/printable.js";

export interface HookEndpointCheck {
  readonly name: "listen";
  readonly status: "pass" | "warn" | "fail";
  readonly detail: string;
  readonly findings: readonly never[];
}

const check = (status: HookEndpointCheck["status"], detail: string): HookEndpointCheck => ({
  name: "listen",
  status,
  detail: printable(detail),
  findings: [],
});

/** The row for `config`'s `[agents] listen`, asked of the daemon on `socketPath`. */
export async function hookEndpointCheck(
  config: GlobalConfig | undefined,
  socketPath: string,
): Promise<HookEndpointCheck> {
  const listen = config?.agents.listen;
  if (listen === undefined)
    return check(
      "pass",
      config === undefined ? "not checked: the config does not load" : 'off ([agents] listen = "")',
    );
  const address = listen.host.includes(":")
    ? `[${listen.host}]:${listen.port}`
    : `${listen.host}:${listen.port}`;
  // Under [server] TLS the endpoint serves https, which no http hook is installed against (decision
  // 0014): the challenge's plain http would be refused there, and the tls row checks the listener.
  if (config?.server.tls !== undefined)
    return check(
      "pass",
      `${address} serves TLS (the tls row checks it); http hooks are not installed under TLS`,
    );
  const proof = await proveHookEndpoint(address, socketPath);
  switch (proof.kind) {
    case "this_daemon":
      return check("pass", `${address} answers as this daemon`);
    case "other":
      return check(
        "fail",
        `${proof.detail}; Claude Code's http hooks would hand it their tokens: free the port and restart the daemon, or install the hooks with --mode command`,
      );
    case "none":
      return check("warn", `${proof.detail}: the daemon runs another [agents] listen until it restarts`);
    case "no_daemon":
      return check("warn", `not checked: ${proof.detail}`);
  }
}
