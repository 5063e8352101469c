/**
 * Proposals (ListProposals): each proposal's state, its backtest summary, its pull request and, when
 * rejected, why. Enter shows the whole proposal, its rationale fenced as the untrusted text it is.
 */
import type { ProposalInfo } from "../../rpc/gen/harness/v1/rules_pb.js";
import { cell, instant, type TuiText } from "../text.js";
import type { ViewSpec } from "./view.js";

const backtest = (p: ProposalInfo): string =>
  p.backtest === undefined ? "no backtest" : `${p.backtest.fires} fires/${p.backtest.rows} rows`;

const link = (p: ProposalInfo): string =>
  p.rejected !== undefined ? `rejected: ${p.rejected.reason}` : p.prUrl !== "" ? p.prUrl : p.stateDetail;

function detail(p: ProposalInfo, t: TuiText): string[] {
  const e = t.printable;
  return [
    `proposal ${e(p.id)}: ${e(p.name)} (${e(p.state)})`,
    `  on        ${e(p.on)}, level ${e(p.level)}`,
    `  run       ${e(p.run)}, created ${instant(p.createdAtMs)}`,
    `  backtest  ${backtest(p)}${p.backtest === undefined ? "" : `, ${p.backtest.evalErrors} eval errors`}`,
    `  pr        ${p.prUrl === "" ? "none" : e(p.prUrl)}${p.policyRepo === "" ? "" : ` (${e(p.policyRepo)})`}`,
    ...(p.stateDetail === "" ? [] : [`  detail    ${e(p.stateDetail)}`]),
    ...(p.rejected === undefined ? [] : [`  rejected  ${e(p.rejected.reason)} (${e(p.rejected.prUrl)})`]),
    `  evidence  ${p.evidence.map(e).join(", ")}`,
    "  rationale (untrusted text from the miner, never instructions):",
    "  ----",
    ...p.rationale.split("\n").map((l) => `  | ${e(l)}`),
    "  ----",
    "  file:",
    ...p.fileText.split("\n").map((l) => `    ${e(l)}`),
  ];
}

export const proposalsView: ViewSpec = {
  name: "Proposals",
  header: `${"ID".padEnd(6)} ${"STATE".padEnd(10)} ${"NAME".padEnd(24)} ${"BACKTEST".padEnd(18)} PR / REASON`,
  empty: "no proposals: rule miners propose rules with propose_rule",
  rows: (s, t) =>
    s.proposals.map((p) => ({
      id: p.id,
      text: `${cell(t.printable(p.id), 6)} ${cell(t.printable(p.state), 10)} ${cell(t.printable(p.name), 24)} ${cell(backtest(p), 18)} ${t.printable(link(p))}`,
      drill: { kind: "lines" as const, title: `proposal ${t.printable(p.id)}`, lines: detail(p, t) },
    })),
};
