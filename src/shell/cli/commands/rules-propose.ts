/**
 * `harness rules propose [--policy-repo NAME] [--dry-run] [--include-silent] [--json]` (SPEC-0029
 * REQ-16): stored rule proposals become pull requests on a policy repo; one whose stored backtest fired
 * 0 times is reported `no_fires` and waits unless `--include-silent` (docs/decisions/0008) (`forge/propose-pass.ts`; the CLI's side is
 * `../propose-on-forge.ts`, which `harness demo` runs too). The command is the only
 * holder of the forge credential: it reads the repo's `credential_file`, sends it to the forge API in
 * one header and to git through a credential helper's pipe, and never puts it in an environment, an
 * argv, a URL, a log line or a file. RecordProposal needs the operator's control token (a dry run
 * records nothing and needs none). Exit 0 when every proposal was handled; 1 when the repo cannot be
 * proposed to (not declared, no credential_file, a reviewer who is the token's own login); 2 for a usage
 * error or a config that does not load; 3 when no daemon answers; 4 when a forge, git or daemon call
 * failed.
 */

import type { Io } from "../io.js";
import { type ProposeOptions, proposeOnForge } from "../propose-on-forge.js";

export async function runPropose(options: ProposeOptions, io: Io): Promise<number> {
  return proposeOnForge(options, io);
}
