/**
 * `harness demo`'s proposal loop (SPEC-0029 REQ-15, REQ-16), after the fleet: a local forge
 * (`local-forge.ts`) holds the fleet's policy repo; the operator declares it as `[policy_repo.demo]`
 * with a credential file and reloads; a rule miner's proposal is stored (the one the scripted MCP miner
 * stored, or else one a scripted miner stores through propose_rule in the daemon's process, as the
 * gateway calls it); `harness rules propose` turns it into a pull request; and the demo shows the pull
 * request's URL and a summary of the body the forge received. The forge runs only while the act does;
 * its repository and `pulls.json` stay in a kept demo directory.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { DaemonApp } from "../app/daemon-app.js";
import { JournalQueryReads } from "../store/journal-query-reads.js";
import { openStoreReadOnly } from "../store/open-store.js";
import type { Narrator } from "./demo.js";
import { LocalForge, type LocalPull } from "./local-forge.js";

export const DEMO_POLICY_REPO = "demo";
/** About how long the act takes (two backtests, a fetch and a push): the fleet runs that much less. */
export const PROPOSAL_LOOP_MS = 4_000;
const OWNER = "fleet";
const REPO = "policy";
const BOT = "harness-bot";
const REVIEWER = "alice";
const LABEL = "harness-rules";
/** The miner's run: a harness `[memory] rule_miners` lists in the demo's config. */
const MINER_RUN = "miner#1";

/** The scripted miner's finding over the demo fleet: nightly closes runs over budget. */
const PROPOSED_RULE = {
  name: "run-closed-over-budget",
  description: "a run closed because it exceeded its budget",
  on: "run_event",
  when: 'event.type == "closed" && event.outcome == "budget_exceeded"',
  level: "notify",
  target: "run",
  message: "{{harness}}: {{run}} closed over its budget",
} as const;

export interface ProposalActDeps {
  readonly daemon: DaemonApp;
  readonly sandbox: { readonly root: string; readonly configPath: string };
  readonly narrator: Narrator;
  /** `harness rules propose --json` as the operator runs it on the demo's config; its exit code. */
  readonly propose: (out: (line: string) => void, err: (line: string) => void) => Promise<number>;
}

export interface ProposalActReport {
  readonly proposal: string;
  readonly number: number;
  readonly url: string;
}

const toml = (s: string): string => JSON.stringify(s);

/** Runs the act; throws, naming the step, when the loop did not end in a pull request. */
export async function showProposalLoop(d: ProposalActDeps): Promise<ProposalActReport> {
  const { narrator } = d;
  const forge = await LocalForge.start(path.join(d.sandbox.root, "forge"));
  try {
    const token = forge.addUser(BOT);
    forge.addUser(REVIEWER);
    await forge.createRepo(
      OWNER,
      REPO,
      { "README.md": "The fleet's rules: rules/<name>.toml, merged after review.\n" },
      [LABEL],
    );
    const remote = forge.remoteOf(OWNER, REPO);
    narrator.line(
      "forge",
      `a local Gitea-style forge at ${forge.origin} holds ${OWNER}/${REPO}, the fleet's policy repo (git over smart HTTP, one token check)`,
      [],
      { origin: forge.origin, remote },
    );
    await declareRepo(d, remote, token);
    const proposal = await storedProposal(d);
    const outcome = await propose(d);
    const pull = forge.pulls.find((p) => p.number === outcome.number);
    if (pull === undefined) throw new Error(`the forge holds no pull request #${outcome.number}`);
    showPull(narrator, outcome.url, pull);
    return { proposal, number: outcome.number, url: outcome.url };
  } finally {
    await forge.stop();
  }
}

/** The operator's side: the bot's token in a 0600 credential file, `[policy_repo.demo]`, a reload. */
async function declareRepo(d: ProposalActDeps, remote: string, token: string): Promise<void> {
  const credential = path.join(d.sandbox.root, "credentials", "forge.token");
  fs.mkdirSync(path.dirname(credential), { recursive: true, mode: 0o700 });
  fs.writeFileSync(credential, `${token}\n`, { mode: 0o600, flag: "wx" });
  const table = [
    "",
    `[policy_repo.${DEMO_POLICY_REPO}]`,
    `remote = ${toml(remote)}`,
    `credential_file = ${toml(credential)}`,
    `reviewers = [${toml(REVIEWER)}]`,
    `labels = [${toml(LABEL)}]`,
    "public = false",
    "",
  ];
  fs.appendFileSync(d.sandbox.configPath, table.join("\n"));
  await d.daemon.reload();
  d.narrator.line(
    "operator",
    `[policy_repo.${DEMO_POLICY_REPO}] declared (remote ${remote}, the bot's token in ${path.basename(credential)}, reviewer ${REVIEWER}); harness reload`,
  );
}

/** The proposal the pass will take: one a miner already stored, or the scripted miner's. */
async function storedProposal(d: ProposalActDeps): Promise<string> {
  const waiting = (await d.daemon.door.proposals.list({ state: "stored", after: 0 }, 1))[0];
  if (waiting !== undefined) return waiting.id;
  const evidence = runsClosedOverBudget(d.daemon.store.path);
  if (evidence.length === 0) throw new Error("the scripted miner found no run closed over budget");
  const answer = await d.daemon.proposals.propose({
    callerRun: MINER_RUN,
    rule: PROPOSED_RULE,
    rationale: `${evidence.join(", ")} closed over budget; no rule tells the operator when a single run does, only when it recurs.`,
    evidence,
    dryRun: false,
  });
  const result = answer.harness_memory_data.data;
  if (result.id === undefined) throw new Error("propose_rule stored nothing");
  d.narrator.line(
    "miner",
    `${MINER_RUN}, a scripted rule miner, calls propose_rule (in the daemon's process, as the gateway does): ${PROPOSED_RULE.name} stored as ${result.id}; its 30-day backtest: ${result.backtest.fires} fires over ${result.backtest.rows} rows`,
    [`evidence: ${evidence.join(", ")}`, ...result.advice.map((a) => `advice ${a.kind}: ${a.message}`)],
    { proposal: result.id, rule: result.name, expression_hash: result.expression_hash },
  );
  return result.id;
}

/** The scripted miner's evidence, read as a miner's journal query would, on a connection of its own. */
function runsClosedOverBudget(storePath: string): string[] {
  const store = openStoreReadOnly(storePath);
  try {
    return new JournalQueryReads(store.db).runsClosedWith("budget_exceeded", 5);
  } finally {
    store.close();
  }
}

interface ProposeJson {
  readonly proposals: readonly {
    id: string;
    name: string;
    action: string;
    detail: string;
    pr_number?: number;
    pr_url?: string;
  }[];
}

/** `harness rules propose`, and the pull request it opened. */
async function propose(d: ProposalActDeps): Promise<{ number: number; url: string }> {
  const out: string[] = [];
  const err: string[] = [];
  d.narrator.line("operator", `harness rules propose --policy-repo ${DEMO_POLICY_REPO}`);
  const code = await d.propose(
    (l) => out.push(l),
    (l) => err.push(l),
  );
  let report: ProposeJson | undefined;
  try {
    report = JSON.parse(out.join("\n")) as ProposeJson;
  } catch {
    report = undefined;
  }
  if (code !== 0 || report === undefined) {
    const errors = (report?.proposals ?? []).filter((p) => p.action === "error").map((p) => p.detail);
    throw new Error(`harness rules propose exited ${code}: ${[...err, ...errors].join("; ")}`);
  }
  let opened: { number: number; url: string } | undefined;
  for (const p of report.proposals) {
    const pull = p.pr_url === undefined ? "" : ` ${p.pr_url}`;
    d.narrator.line("propose", `${p.id} ${p.name}: ${p.action}${pull} (${p.detail})`, [], {
      proposal: p.id,
      action: p.action,
      ...(p.pr_url === undefined ? {} : { pr_number: p.pr_number, pr_url: p.pr_url }),
    });
    if (p.action === "opened" && p.pr_number !== undefined && p.pr_url !== undefined)
      opened ??= { number: p.pr_number, url: p.pr_url };
  }
  if (opened === undefined) throw new Error("harness rules propose opened no pull request");
  return opened;
}

/**
 * The pull request as the forge received it: its URL, and of its body the marker, what the rule is, the
 * shadow statement, the backtest and the would-have-fired heading. Only lines the body's own template
 * writes are shown: the fenced, untrusted parts (rationale, description, message) are not.
 */
function showPull(narrator: Narrator, url: string, pull: LocalPull): void {
  const summary = bodySummary(pull.body);
  narrator.line(
    "forge",
    `pull request #${pull.number} opened: ${url}`,
    [
      `${pull.title} (${pull.head} into ${pull.base}), review requested from ${pull.reviewers.join(", ")}, labels ${pull.labels.join(", ")}`,
      ...summary,
    ],
    { pr_number: pull.number, pr_url: url, title: pull.title, body_summary: summary },
  );
}

const TEMPLATE_LINES = [
  /^<!-- harness-rules name=[a-z][a-z0-9-]* hash=[0-9a-f]+ -->$/,
  /^- on `[a-z_]+`, level `[a-z]+`, target `[a-z_]*`$/,
  /^\*\*.*\*\*$/,
  /^### Backtest over the last \S+$/,
  /^\d+ fires? over \d+ rows; \d+ eval errors, \d+ store errors\.$/,
  /^### Would have fired \(\d+ of \d+.*\)$/,
];

export function bodySummary(body: string): string[] {
  return body
    .split("\n")
    .filter((l) => TEMPLATE_LINES.some((t) => t.test(l)))
    .map((l) => l.replace(/^\*\*(.*)\*\*$/, "$1").replace(/^### /, ""));
}
