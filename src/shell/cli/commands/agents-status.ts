/**
 * `harness agents status [--json]`: doctor's agents row alone, read on this machine without the local
 * daemon (docs/agents.md): each install and its hooks, a remote install's daemon and whether its hook
 * endpoint answers over TLS (decision 0017), and the spool. Exit 0, or 1 when the row warns.
 */
import { agentsCheck } from "../doctor/agents-check.js";
import { EXIT, type Io } from "../io.js";

export async function runAgentsStatus(
  options: { readonly json?: boolean | undefined },
  io: Io,
): Promise<number> {
  const check = await agentsCheck(io.env, undefined);
  if (options.json === true) io.out(JSON.stringify(check));
  else {
    io.out(`${check.status.toUpperCase().padEnd(4)}  agents  ${check.detail}`);
    for (const f of check.findings) io.out(`        ${f.status}: ${f.message}`);
  }
  return check.status === "pass" ? EXIT.ok : EXIT.failed;
}
