/**
 * `harness rules proposals [--state S] [--json]` (SPEC-0029 REQ-19's proposal visibility, at the CLI):
 * the stored rule proposals, oldest first, with their state, last backtest, pull request and detail
 * (the rejection reason of a closed one, the error of an invalid one), through ListProposals.
 */
import type { ProposalInfo } from "../../rpc/gen/harness/v1/rules_pb.js";
import { withClient } from "../client.js";
import { type Common, EXIT, type Io, iso, isoOr, table } from "../io.js";

export interface ProposalsOptions extends Common {
  readonly state?: string | undefined;
}

export function runProposals(options: ProposalsOptions, io: Io): Promise<number> {
  return withClient("rules proposals", options, io, async (client) => {
    const all: ProposalInfo[] = [];
    let after = "";
    for (;;) {
      const r = await client.listProposals({ state: options.state ?? "", after, limit: 1_000 });
      all.push(...r.proposals);
      const last = r.proposals.at(-1);
      if (!r.truncated || last === undefined) break;
      after = last.id;
    }
    if (options.json === true) {
      io.out(JSON.stringify({ proposals: all.map(proposalJson) }));
      return EXIT.ok;
    }
    if (all.length === 0) {
      io.out(
        options.state === undefined ? "no rule proposals are stored" : `no proposal is ${options.state}`,
      );
      return EXIT.ok;
    }
    for (const line of table(
      ["ID", "NAME", "STATE", "LEVEL", "BACKTEST", "PULL REQUEST", "UPDATED", "DETAIL"],
      all.map((p) => [
        p.id,
        p.name,
        p.state,
        p.level,
        `${p.backtest?.fires ?? 0n} fires / ${p.backtest?.rows ?? 0n} rows`,
        p.prNumber === 0n ? "-" : `${p.policyRepo} #${p.prNumber} ${p.prUrl}`,
        isoOr(p.updatedAtMs, "-"),
        p.stateDetail.replace(/\s+/g, " ").slice(0, 200) || "-",
      ]),
    ))
      io.out(line);
    return EXIT.ok;
  });
}

const proposalJson = (p: ProposalInfo) => ({
  id: p.id,
  name: p.name,
  state: p.state,
  detail: p.stateDetail,
  on: p.on,
  level: p.level,
  content_hash: p.contentHash,
  expression_hash: p.expressionHash,
  run: p.run,
  evidence: p.evidence,
  policy_repo: p.policyRepo === "" ? null : p.policyRepo,
  pr_number: p.prNumber === 0n ? null : Number(p.prNumber),
  pr_url: p.prUrl === "" ? null : p.prUrl,
  backtest: {
    since: iso(p.backtest?.sinceMs ?? 0n),
    at: iso(p.backtest?.atMs ?? 0n),
    rows: Number(p.backtest?.rows ?? 0n),
    fires: Number(p.backtest?.fires ?? 0n),
    eval_errors: Number(p.backtest?.evalErrors ?? 0n),
    store_errors: Number(p.backtest?.storeErrors ?? 0n),
  },
  created_at: iso(p.createdAtMs),
  updated_at: iso(p.updatedAtMs),
});
