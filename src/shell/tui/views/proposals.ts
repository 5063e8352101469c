/**
 * Proposals (ListProposals): each proposal's state, its backtest summary, its pull request and, when
 * rejected, why. Enter shows the whole proposal, its rationale fenced as the untrusted text it is.
 */
import type { ProposalInfo } from "../../rpc/gen/harness/v1/rules_pb.js";
import { layout } from "../columns.js";
import { instant, type TuiText } from "../text.js";
import type { ViewSpec } from "./view.js";

const table = (screen: number) =>
  layout(
    [
      { title: "ID", width: 6 },
      { title: "STATE", width: 10 },
      { title: "NAME", width: 24, upTo: 48 },
      { title: "BACKTEST", width: 18, upTo: 24 },
    ],
    "PR / REASON",
    screen,
  );

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
  header: (screen) => table(screen).header,
  empty: "no proposals: rule miners propose rules with propose_rule",
  rows: (s, t, screen) => {
    const l = table(screen);
    return s.proposals.map((p) => ({
      id: p.id,
      text: l.line(
        [t.printable(p.id), t.printable(p.state), t.printable(p.name), backtest(p)],
        t.printable(link(p)),
      ),
      drill: { kind: "lines" as const, title: `proposal ${t.printable(p.id)}`, lines: detail(p, t) },
    }));
  },
};
