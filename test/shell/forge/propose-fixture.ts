/**
 * A policy repo on a test forge (`test-forge.ts`) and a real daemon with a stand-in gateway (so a rule
 * miner can store proposals through propose_rule, which no RPC offers), wired as an operator would:
 * `[policy_repo.ops]` names the forge's HTTPS remote and a 0600 credential file holding the bot's token;
 * git trusts the forge's certificate through the operator's global git config, and Node through
 * `NODE_EXTRA_CA_CERTS`. `harness rules propose` runs as the built CLI.
 */
import * as fs from "node:fs";
import * as http from "node:http";
import * as path from "node:path";
import Database from "better-sqlite3";
import { expect } from "vitest";
import { forgetProposals, journalCount, proposals } from "../../support/store-reads.js";
import { type CliResult, jsonl, TestFleet } from "../daemon-harness.js";
import { type ForgeKind, TestForge } from "./test-forge.js";
import { TestGitLab } from "./test-gitlab.js";

export const OWNER = "org";
/** GitLab's policy repo sits in a nested group, so every scenario there runs on one. */
export const ownerOf = (kind: ForgeKind): string => (kind === "gitlab" ? "org/platform" : OWNER);
export const REPO = "policy";
export const BOT = "harness-bot";
export const REVIEWER = "alice";
export const MINER = "miner";
/** A GitHub App's bot user, whose installation token the GitHub stand-in refuses `GET /user`. */
export const APP_BOT = "harness-app[bot]";
/** The forge's labels on the policy repo; the config asks for the first. */
const LABELS = ["harness-rules", "rules"];

export interface ProposeSetup {
  readonly reviewers?: readonly string[];
  readonly public?: boolean;
  readonly maxPerWeek?: number;
  /** Files of the policy repo's first commit. */
  readonly files?: Record<string, string>;
  /** The credential file holds a GitHub App installation token (GitHub only) instead of the bot's token. */
  readonly installation?: boolean;
  /** `bot_login`; by default the bot's login on GitHub (which propose never asks) and unset on Gitea. */
  readonly botLogin?: string | null;
  /** `public`; null leaves it unset. */
  readonly publicKey?: boolean | null;
  /** `commit_author`. */
  readonly commitAuthor?: string;
  /** `forge`, declaring which forge the remote is on; unset, it is probed. */
  readonly forge?: ForgeKind;
}

export class ProposeWorld {
  readonly forge: TestForge;
  readonly fleet: TestFleet;
  readonly token: string;
  /** An installation token of the GitHub App `APP_BOT` (GitHub only). */
  readonly appToken: string | undefined;
  readonly credentialFile: string;
  /** The policy repo's namespace on the forge. */
  readonly owner: string;
  private readonly maxPerWeek: number;

  private constructor(forge: TestForge, setup: ProposeSetup) {
    this.forge = forge;
    this.owner = ownerOf(forge.kind);
    this.token = forge.addUser(BOT);
    this.appToken = forge.kind === "github" ? forge.addInstallation(APP_BOT) : undefined;
    forge.addUser(REVIEWER);
    forge.createRepo(this.owner, REPO, setup.files ?? {}, LABELS);
    this.maxPerWeek = setup.maxPerWeek ?? 3;
    this.fleet = new TestFleet({ gateway: true, config: `[memory]\nrule_miners = ["${MINER}"]\n` });
    this.credentialFile = path.join(this.fleet.root, "forge.token");
    fs.writeFileSync(this.credentialFile, `${this.tokenFor(setup)}\n`, { mode: 0o600 });
    fs.appendFileSync(this.configFile, this.policyRepo(setup));
    fs.writeFileSync(path.join(this.fleet.root, ".gitconfig"), `[http]\n\tsslCAInfo = ${forge.caFile}\n`);
    (this.fleet.env as Record<string, string>).NODE_EXTRA_CA_CERTS = forge.caFile;
  }

  static async start(kind: ForgeKind, setup: ProposeSetup = {}): Promise<ProposeWorld> {
    const forge = kind === "gitlab" ? await TestGitLab.startGitLab() : await TestForge.start(kind);
    const w = new ProposeWorld(forge, setup);
    try {
      await w.fleet.start();
      await w.ledger([1, 2, 3].map(budget));
      await w.fleet.until(() => journalCount(w.fleet, { kind: "run_event" }) === 3, "3 rows");
    } catch (e) {
      await w.dispose();
      throw e;
    }
    return w;
  }

  private get configFile(): string {
    return path.join(this.fleet.root, "config", "harness", "harness.toml");
  }

  /** The config's `[policy_repo.ops]`, the last section of the file. */
  private policyRepo(setup: ProposeSetup): string {
    const botLogin =
      setup.botLogin !== undefined ? setup.botLogin : this.forge.kind === "github" ? BOT : null;
    return [
      "[policy_repo.ops]",
      `remote = "${this.forge.remoteOf(this.owner, REPO)}"`,
      `credential_file = ${JSON.stringify(this.credentialFile)}`,
      `reviewers = ${JSON.stringify(setup.reviewers ?? [REVIEWER])}`,
      `labels = ${JSON.stringify(LABELS.slice(0, 1))}`,
      ...(setup.publicKey === null ? [] : [`public = ${setup.publicKey ?? setup.public ?? false}`]),
      `max_proposals_per_week = ${this.maxPerWeek}`,
      ...(botLogin === null ? [] : [`bot_login = ${JSON.stringify(botLogin)}`]),
      ...(setup.commitAuthor === undefined ? [] : [`commit_author = ${JSON.stringify(setup.commitAuthor)}`]),
      ...(setup.forge === undefined ? [] : [`forge = ${JSON.stringify(setup.forge)}`]),
      "",
    ].join("\n");
  }

  private tokenFor(setup: ProposeSetup): string {
    if (setup.installation !== true) return this.token;
    if (this.appToken === undefined) throw new Error("an installation token is GitHub's");
    return this.appToken;
  }

  /**
   * Makes this world what `start(kind, setup)` makes, without a new daemon, forge or ledger: a file's
   * tests share one world (a daemon start and its setup took longer than most tests' own work), each
   * beginning with a reset. The forge forgets its pull requests and requests and gets the policy repo
   * afresh; the store loses every proposal, pull request and rejection it recorded (ids count from p-1
   * again, as `INTEGER PRIMARY KEY` does on an empty table); the proposal clone is removed; the config's
   * `[policy_repo.ops]` and the credential file are written anew. The daemon reads only the repo's name
   * and `max_proposals_per_week` of that section (RecordProposal's cap), so a setup may change the rest
   * of it (read by `harness rules propose`) without a reload, but not the cap. The journal keeps what
   * earlier tests appended (the three over-budget closes, and whatever a test added).
   */
  async reset(setup: ProposeSetup = {}): Promise<void> {
    if ((setup.maxPerWeek ?? 3) !== this.maxPerWeek)
      throw new Error("max_proposals_per_week is the daemon's too: start a world of its own for it");
    this.forge.reset();
    this.forge.createRepo(this.owner, REPO, setup.files ?? {}, LABELS);
    const config = fs.readFileSync(this.configFile, "utf8");
    fs.writeFileSync(
      this.configFile,
      config.slice(0, config.indexOf("[policy_repo.ops]")) + this.policyRepo(setup),
    );
    fs.writeFileSync(this.credentialFile, `${this.tokenFor(setup)}\n`, { mode: 0o600 });
    fs.rmSync(path.join(this.fleet.root, "state", "harness", "proposals"), { recursive: true, force: true });
    const db = new Database(this.fleet.storePath);
    try {
      db.pragma("busy_timeout = 10000");
      forgetProposals(db);
    } finally {
      db.close();
    }
  }

  async ledger(rows: readonly Record<string, unknown>[]): Promise<void> {
    const r = await this.fleet.cli(
      ["journal", "append", "--token-file", this.fleet.tokens.get("ledger") as string],
      jsonl(rows),
    );
    expect(r.code, r.stderr).toBe(0);
  }

  async graph(rows: readonly Record<string, unknown>[]): Promise<void> {
    const r = await this.fleet.cli(
      ["journal", "append", "--token-file", this.fleet.tokens.get("graph") as string],
      jsonl(rows),
    );
    expect(r.code, r.stderr).toBe(0);
  }

  /** One propose_rule call through the stand-in gateway; the stored proposal's id. */
  async propose(
    name: string,
    over: Record<string, unknown> = {},
    rule: Record<string, unknown> = {},
  ): Promise<string> {
    const a = await gatewayCall(this.fleet, {
      callerRun: `${MINER}#1`,
      rule: ruleOf(name, rule),
      rationale: "Three runs of nightly closed over budget this week; the operator should hear of it.",
      evidence: ["nightly#1"],
      dryRun: false,
      ...over,
    });
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    const data = (a.body.harness_memory_data as { data: { id: string } }).data;
    return data.id;
  }

  /** `harness rules propose --json` and its parsed answer. */
  async run(args: readonly string[] = []): Promise<CliResult & { json: ProposeJson | undefined }> {
    const r = await this.fleet.cli(["rules", "propose", "--json", ...args]);
    let json: ProposeJson | undefined;
    try {
      json = JSON.parse(r.stdout) as ProposeJson;
    } catch {
      json = undefined;
    }
    return { ...r, json };
  }

  states(): Record<string, string> {
    return Object.fromEntries(proposals(this.fleet).map((p) => [p.id, p.state]));
  }

  detail(id: string): string {
    return proposals(this.fleet).find((p) => p.id === id)?.stateDetail ?? "";
  }

  /** The pull request bodies the forge received, in order (created, then edited). */
  bodiesReceived(): string[] {
    return this.forge.requests.flatMap((r) => {
      if (!/\/(pulls|merge_requests)(\/\d+)?$/.test(r.path) || r.method === "GET") return [];
      const sent = JSON.parse(r.body) as { body?: unknown; description?: unknown };
      const body = sent.body ?? sent.description;
      return typeof body === "string" ? [body] : [];
    });
  }

  async dispose(): Promise<void> {
    await this.fleet.dispose();
    await this.forge.dispose();
  }
}

export interface ProposeJson {
  readonly policy_repo: string;
  readonly forge: string;
  readonly login: string | null;
  readonly dry_run: boolean;
  readonly proposals: readonly {
    id: string;
    name: string;
    action: string;
    detail: string;
    pr_number?: number;
    pr_url?: string;
  }[];
}

export const budget = (n: number) => ({
  kind: "run_event",
  type: "closed",
  harness: "nightly",
  run: `nightly#${n}`,
  outcome: "budget_exceeded",
});

/** A `when` of its own per key, so each proposal has its own expression hash unless told otherwise. */
export const whenOf = (key: string) =>
  `event.type == "closed" && event.outcome == "budget_exceeded" && event.harness != "${key}"`;

export const ruleOf = (name: string, over: Record<string, unknown> = {}) => ({
  name,
  description: "a harness closes runs over budget again and again",
  on: "run_event",
  when: whenOf(name),
  level: "notify",
  target: "run",
  message: "{{harness}}: {{run}} closed over budget",
  ...over,
});

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

function gatewayCall(f: TestFleet, call: Record<string, unknown>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { socketPath: f.gatewaySocket, method: "POST", path: "/", timeout: 30_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>,
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(call));
  });
}
