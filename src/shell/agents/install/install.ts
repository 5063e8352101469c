/**
 * `harness agents install` and `uninstall`, as steps over real files: read and check the agent's settings
 * file first (a file that does not parse or has another shape stops everything, nothing minted or
 * written), then mint the harness's two producer tokens if it has none (`producer-tokens.ts`), then write
 * the merged settings (a backup of the old bytes first) and the record of the install. Uninstall removes
 * exactly our entries (and the keys, and the file, install created), and revokes the tokens and removes
 * their files once no install of that harness is left; the revocation comes first, so a daemon that does
 * not answer leaves everything as it was. `dryRun` reads and reports, and neither mints nor writes.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { gitTest } from "../../policy/git.js";
import { writeTokenFile } from "../../rpc/credentials.js";
import type { AgentAdapter, HookMode, Scope } from "../adapters/adapter.js";
import type { HookFailMode } from "../ingest/fail-mode.js";
import type { RemoteDaemon } from "../ingest/hook-limits.js";
import {
  backupsDir,
  harnessTokenDir,
  installRecordPath,
  PRODUCER_ROLES,
  type ProducerRole,
  tokenFilePath,
} from "./agent-paths.js";
import {
  type HookTarget,
  hookArgv,
  hookEntries,
  isOurHandler,
  type TokenFiles,
  tokenEnvNames,
} from "./hook-entries.js";
import {
  findInstall,
  type InstallEntry,
  readInstallRecord,
  type TokenEntry,
  withInstall,
  withoutInstall,
  withTokens,
  writeInstallRecord,
} from "./install-record.js";
import { readTokenIfPresent, type TokenIssuer } from "./producer-tokens.js";
import { backUp, located, readSettings, writeSettings } from "./settings-file.js";
import { isEmptySettings, mergeEntries, removeEntries } from "./settings-merge.js";

export interface AgentsRequest {
  /** The agent, as the adapter registry has it. */
  readonly agent: AgentAdapter;
  readonly harness: string;
  readonly scope: Scope;
  readonly dryRun: boolean;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly now: () => number;
}

export interface InstallRequest extends AgentsRequest {
  readonly mode: HookMode;
  /** Command mode: the program and script that run this CLI, absolute. */
  readonly launcher: readonly string[];
  /** Command mode: the daemon's socket, written into the hook so it needs no config. */
  readonly socket: string;
  /** Http mode: `[agents] listen`. */
  readonly listen: string;
  /** `[server]` TLS, which the hook endpoint serves too: mutual when it names a client CA. */
  readonly listenTls?: { readonly mutual: boolean } | undefined;
  /** `--fail closed|open`: the harness's own fail mode; absent, `[agents] on_unreachable` decides. */
  readonly fail?: HookFailMode;
  /**
   * `--daemon https://host:port`: a remote daemon's hook endpoint (decision 0017). The command hook
   * posts there over TLS with git facts computed on this machine; an http hook posts there straight,
   * its tokens from the environment.
   */
  readonly daemon?: RemoteDaemon;
}

export interface TokenReport {
  readonly file: string;
  /** Undefined only in a dry run that would mint it. */
  readonly id: string | undefined;
  readonly minted: boolean;
}

export interface InstallReport {
  readonly agent: string;
  readonly harness: string;
  readonly scope: Scope["kind"];
  readonly file: string;
  readonly mode: HookMode;
  readonly fail: HookFailMode | undefined;
  /** A remote install's daemon URL. */
  readonly daemon: string | undefined;
  readonly dryRun: boolean;
  /** Whether the settings file changed (or would, in a dry run). */
  readonly changed: boolean;
  readonly events: readonly string[];
  readonly backup: string | undefined;
  readonly tokens: Readonly<Record<ProducerRole, TokenReport>>;
  readonly notes: readonly string[];
}

export interface UninstallReport {
  readonly agent: string;
  readonly harness: string;
  readonly scope: Scope["kind"];
  readonly file: string;
  readonly dryRun: boolean;
  readonly changed: boolean;
  /** Our handlers removed from the file. */
  readonly removed: number;
  /** Install had created the file and nothing else was left in it, so it was removed. */
  readonly fileRemoved: boolean;
  readonly backup: string | undefined;
  /** The harness's tokens revoked (their files removed), or why they were kept. */
  readonly tokens:
    | { readonly state: "revoked"; readonly ids: readonly string[]; readonly files: readonly string[] }
    | { readonly state: "kept"; readonly installs: number }
    | { readonly state: "none" };
}

/** A request the command refuses before touching anything (a usage error). */
export class AgentsUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AgentsUsageError";
  }
}

const ours = (agent: AgentAdapter, harness: string) => (h: unknown) => isOurHandler(h, agent, harness);

const tokenFiles = (env: NodeJS.ProcessEnv, harness: string): TokenFiles => ({
  observer: tokenFilePath(env, harness, "observer"),
  ledger: tokenFilePath(env, harness, "ledger"),
});

function target(req: InstallRequest, tokens: TokenFiles): HookTarget {
  return {
    agent: req.agent,
    harness: req.harness,
    ...(req.fail === undefined ? {} : { fail: req.fail }),
    hook:
      req.mode === "command"
        ? {
            mode: "command",
            launcher: req.launcher,
            tokenFiles: tokenFiles(req.env, req.harness),
            socket: req.socket,
            ...(req.daemon === undefined ? {} : { daemon: req.daemon }),
          }
        : {
            mode: "http",
            listen: req.listen,
            tokens,
            ...(req.daemon === undefined
              ? {}
              : { remote: { url: req.daemon.url, env: tokenEnvNames(req.harness) } }),
          },
  };
}

/** What a remote install tells its operator: where the hooks post, and what http mode gives up. */
function remoteNotes(req: InstallRequest, files: TokenFiles): string[] {
  const d = req.daemon;
  if (d === undefined) return [];
  if (req.mode === "command")
    return [
      `the hooks post to ${d.url} over TLS${d.caFile === undefined ? " (the system's CAs)" : `, trusting ${d.caFile}`}${d.clientCert === undefined ? "" : `, with the client certificate ${d.clientCert}`}; git facts (repo, branch, repo-relative paths) are computed on this machine and sent with each call; while ${d.url} cannot be reached, calls wait in the spool and are delivered in order when it answers`,
    ];
  const env = tokenEnvNames(req.harness);
  return [
    `http mode to a remote daemon loses the git facts: ${d.url} cannot see this machine's disk and ${req.agent.title}'s http hook sends none, so its rows have no repo, branch or paths, and no collision rule can see them; nothing is spooled while ${d.url} is down (the hook fails open). Install with --mode command (the default) to keep them`,
    `the tokens are not in the settings file: ${req.agent.title} reads them from the environment variables ${env.observer} and ${env.ledger} (its allowedEnvVars); export them from the 0600 files before starting it: export ${env.observer}="$(cat ${files.observer})" ${env.ledger}="$(cat ${files.ledger})"`,
    ...(d.caFile === undefined
      ? []
      : [
          `${req.agent.title}'s http hook cannot be given ${d.caFile} in its settings: start it with NODE_EXTRA_CA_CERTS=${d.caFile} (it runs on Node), or serve a certificate the system trusts`,
        ]),
  ];
}

export async function install(req: InstallRequest, issuer: TokenIssuer): Promise<InstallReport> {
  const { modes } = req.agent.install;
  if (!modes.includes(req.mode))
    throw new AgentsUsageError(
      `--mode ${req.mode} is not for ${req.agent.title}: it runs ${modes.join(" or ")} hooks alone`,
    );
  if (req.mode === "http" && req.daemon?.clientCert !== undefined)
    throw new AgentsUsageError(
      `--mode http is refused with --client-cert: ${req.agent.title}'s http hook cannot present a client certificate; install with --mode command`,
    );
  if (req.mode === "http" && req.daemon === undefined && req.listen === "")
    throw new AgentsUsageError(
      '--mode http needs the daemon\'s hook endpoint, but [agents] listen is "" (off)',
    );
  // The endpoint serves https under [server] TLS (decision 0014); an agent's http hook has no setting
  // for a client certificate, nor for trusting a private CA.
  if (req.mode === "http" && req.daemon === undefined && req.listenTls !== undefined)
    throw new AgentsUsageError(
      req.listenTls.mutual
        ? `--mode http is refused: the hook endpoint needs TLS with a client certificate ([server] client_ca_file), and ${req.agent.title}'s http hook cannot present one; install with --mode command (the command hook reaches the daemon over its socket)`
        : `--mode http is refused: the hook endpoint serves TLS ([server] tls_cert_file); this machine's agents reach it with --mode command over the socket, and another machine's with --daemon https://HOST:PORT`,
    );
  const file = req.agent.install.settingsFile(req.scope, req.env, req.cwd);
  const text = readSettings(file);
  const recordFile = installRecordPath(req.env);
  let record = readInstallRecord(recordFile);
  const files = tokenFiles(req.env, req.harness);
  const recorded = record.tokens[req.harness];
  const present = { observer: readTokenIfPresent(files.observer), ledger: readTokenIfPresent(files.ledger) };
  const filesThere = recorded !== undefined && present.observer !== undefined && present.ledger !== undefined;
  // Tokens revoked since (`harness token revoke`) would leave the hooks refused: they are minted anew.
  // A dry run does not ask the daemon.
  const reuse =
    filesThere &&
    (req.dryRun || (await issuer.inForce([recorded.observer.id, recorded.ledger.id])).size === 2);
  let values: TokenFiles = reuse
    ? { observer: present.observer ?? "", ledger: present.ledger ?? "" }
    : { observer: "<observer token>", ledger: "<ledger token>" };
  // The file is checked before anything is minted: a bad file stops the install with nothing done.
  const preview = located(file, text ?? "{}", () =>
    mergeEntries(text, hookEntries(target(req, values)), ours(req.agent, req.harness)),
  );
  const tokens: Record<ProducerRole, TokenReport> = {
    observer: { file: files.observer, id: reuse ? recorded?.observer.id : undefined, minted: !reuse },
    ledger: { file: files.ledger, id: reuse ? recorded?.ledger.id : undefined, minted: !reuse },
  };
  const events = Object.keys(req.agent.install.events);
  const notes = [...req.agent.install.notes];
  if (
    req.scope.kind === "project" &&
    (await gitIgnores(path.resolve(req.cwd, req.scope.dir), file, req.env)) === false
  )
    notes.push(
      `${file} ${req.mode === "http" && req.daemon === undefined ? "holds the hook tokens" : "names paths on this machine"} and git does not ignore it in this repository: add it to .git/info/exclude (or .gitignore) so it is never committed`,
    );
  notes.push(...remoteNotes(req, files));
  if (req.fail !== undefined) notes.push(failNote(req.agent, req.fail));
  const program = await programNote(req, file);
  if (program !== undefined) notes.push(program);
  const existing = findInstall(record, { agent: req.agent.name, harness: req.harness, file });
  if (req.dryRun)
    return {
      ...base(req, file),
      mode: req.mode,
      fail: req.fail,
      daemon: req.daemon?.url,
      changed: preview.changed,
      events,
      backup: undefined,
      tokens,
      notes,
    };
  if (!reuse) {
    const label = `agents ${req.harness}`;
    const minted: Partial<Record<ProducerRole, TokenEntry>> = {};
    for (const role of PRODUCER_ROLES) {
      const t = await issuer.mint(role, req.harness, label);
      writeTokenFile(files[role], t.token, true);
      minted[role] = { id: t.id, file: files[role] };
      values = { ...values, [role]: t.token };
      tokens[role] = { file: files[role], id: t.id, minted: true };
    }
    // Tokens of an earlier install whose files are gone would otherwise stay valid, held by nobody.
    if (recorded !== undefined) await issuer.revoke([recorded.observer.id, recorded.ledger.id]);
    record = withTokens(record, req.harness, minted as Record<ProducerRole, TokenEntry>);
    writeInstallRecord(recordFile, record);
  }
  const merged = reuse
    ? preview
    : mergeEntries(text, hookEntries(target(req, values)), ours(req.agent, req.harness));
  let backup: string | undefined;
  if (merged.changed) {
    if (text !== undefined) backup = backUp(file, backupsDir(req.env), req.agent.name, req.now());
    // A remote http hook names environment variables, not tokens: nothing secret is in the file.
    const secret = req.mode === "http" && req.daemon === undefined;
    writeSettings(file, merged.text, { newMode: secret ? 0o600 : 0o644, narrow: secret });
  }
  const created = [...new Set([...(existing?.created ?? []), ...merged.created])];
  if (
    existing === undefined ||
    merged.changed ||
    existing.mode !== req.mode ||
    existing.fail !== req.fail ||
    existing.daemon !== req.daemon?.url
  )
    writeInstallRecord(
      recordFile,
      withInstall(record, {
        agent: req.agent.name,
        harness: req.harness,
        scope: req.scope.kind,
        file,
        mode: req.mode,
        ...(req.fail === undefined ? {} : { fail: req.fail }),
        ...(req.daemon === undefined ? {} : { daemon: req.daemon.url }),
        created,
        createdFile: existing?.createdFile ?? text === undefined,
        installedAt:
          existing !== undefined && !merged.changed
            ? existing.installedAt
            : new Date(req.now()).toISOString(),
      } satisfies InstallEntry),
    );
  return {
    ...base(req, file),
    mode: req.mode,
    fail: req.fail,
    daemon: req.daemon?.url,
    changed: merged.changed,
    events,
    backup,
    tokens,
    notes,
  };
}

/** The most of an operator's TOML file install reads to see whether it already sets the program's key. */
const MAX_PROGRAM_FILE_BYTES = 1024 * 1024;
/** The most of the operator's own value a note quotes. */
const MAX_QUOTED = 200;

/**
 * The line that runs the agent's argv program (Codex's `notify`) for this harness, and whether its file
 * already has it: install prints it rather than editing the operator's TOML, and never offers to replace
 * a program of theirs without saying so.
 */
async function programNote(req: InstallRequest, settingsFile: string): Promise<string | undefined> {
  const program = req.agent.install.argvProgram;
  if (program === undefined || req.mode !== "command") return undefined;
  const argv = hookArgv(
    {
      agent: req.agent,
      harness: req.harness,
      ...(req.fail === undefined ? {} : { fail: req.fail }),
      hook: {
        mode: "command",
        launcher: req.launcher,
        tokenFiles: tokenFiles(req.env, req.harness),
        socket: req.socket,
        ...(req.daemon === undefined ? {} : { daemon: req.daemon }),
      },
    },
    program.hook,
  );
  // A JSON string is a TOML basic string: the same quotes and escapes.
  const line = `${program.key} = [${argv.map((w) => JSON.stringify(w)).join(", ")}]`;
  const file = program.file(settingsFile);
  const current = await topLevelValue(file, program.key, argv);
  if (current.state === "same")
    return `${file} already runs ${program.hook} for harness ${req.harness}: ${line}`;
  if (current.state === "other")
    return `${file} already sets ${program.key} = ${current.quoted}; ${req.agent.title} runs one ${program.key} program, so ours is not added (install never edits that file): keep yours, or replace it with: ${line}`;
  const unread = current.state === "unreadable" ? ` (${file} could not be read as TOML: ${current.why})` : "";
  return `to record each turn's end through ${req.agent.title}'s ${program.key} program as well, add this line to ${file}, above its first [table] (install does not edit TOML files)${unread}: ${line}`;
}

type TopLevel =
  | { readonly state: "absent" | "same" }
  | { readonly state: "other"; readonly quoted: string }
  | { readonly state: "unreadable"; readonly why: string };

async function topLevelValue(file: string, key: string, ours?: readonly string[]): Promise<TopLevel> {
  let text: string;
  try {
    if (fs.statSync(file).size > MAX_PROGRAM_FILE_BYTES)
      return { state: "unreadable", why: `larger than ${MAX_PROGRAM_FILE_BYTES} bytes` };
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT"
      ? { state: "absent" }
      : { state: "unreadable", why: (e as Error).message };
  }
  let value: unknown;
  try {
    // Loaded here only: the hook's own start never pays for the TOML parser.
    const { parse } = await import("smol-toml");
    value = parse(text)[key];
  } catch (e) {
    return { state: "unreadable", why: (e as Error).message.split("\n")[0] ?? "" };
  }
  if (value === undefined) return { state: "absent" };
  const quoted = JSON.stringify(value) ?? "";
  if (ours !== undefined && quoted === JSON.stringify(ours)) return { state: "same" };
  return {
    state: "other",
    quoted: quoted.length > MAX_QUOTED ? `${quoted.slice(0, MAX_QUOTED)}…` : quoted,
  };
}

/** What `--fail` covers for this agent, and what it cannot. */
function failNote(agent: AgentAdapter, fail: HookFailMode): string {
  if (fail === "open")
    return `--fail open: a tool call the rules cannot judge (the daemon down, hung, or too slow) runs, whatever [agents] on_unreachable says`;
  const own = agent.install.failClosed;
  return own === undefined
    ? `--fail closed: the forwarder denies a tool call when the daemon cannot be reached or does not answer within its --timeout, and the daemon denies one it cannot judge in time; ${agent.title} has no fail-closed switch of its own, so a hook that cannot start at all (node or the CLI removed) lets the call run`
    : `--fail closed: ${Object.entries(own.field)
        .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
        .join(
          ", ",
        )} is written on ${own.events.join(", ")}, which ${agent.title} honours from version ${own.since} (a hook that cannot start, times out or answers garbage then blocks the call); ${own.before}`;
}

const base = (req: AgentsRequest, file: string) => ({
  agent: req.agent.name,
  harness: req.harness,
  scope: req.scope.kind,
  file,
  dryRun: req.dryRun,
});

export async function uninstall(req: AgentsRequest, issuer: TokenIssuer): Promise<UninstallReport> {
  const file = req.agent.install.settingsFile(req.scope, req.env, req.cwd);
  const recordFile = installRecordPath(req.env);
  let record = readInstallRecord(recordFile);
  const key = { agent: req.agent.name, harness: req.harness, file };
  const entry = findInstall(record, key);
  const text = readSettings(file);
  const removed =
    text === undefined
      ? undefined
      : located(file, text, () => removeEntries(text, ours(req.agent, req.harness), entry?.created));
  const fileRemoved =
    removed !== undefined && entry?.createdFile === true && removed.changed && isEmptySettings(removed.text);
  const others = record.installs.filter((e) => e.harness === req.harness && e !== entry).length;
  const recorded = record.tokens[req.harness];
  const files = tokenFiles(req.env, req.harness);
  const tokenReport: UninstallReport["tokens"] =
    others > 0
      ? { state: "kept", installs: others }
      : recorded !== undefined || fs.existsSync(files.observer) || fs.existsSync(files.ledger)
        ? {
            state: "revoked",
            ids: recorded === undefined ? [] : [recorded.observer.id, recorded.ledger.id],
            files: [files.observer, files.ledger].filter((f) => fs.existsSync(f)),
          }
        : { state: "none" };
  const report = {
    ...base(req, file),
    changed: removed?.changed ?? false,
    removed: removed?.removed ?? 0,
    fileRemoved,
  };
  if (req.dryRun) return { ...report, backup: undefined, tokens: tokenReport };
  // Revoked first: when the daemon does not answer, nothing below has happened.
  if (tokenReport.state === "revoked" && tokenReport.ids.length > 0) await issuer.revoke(tokenReport.ids);
  let backup: string | undefined;
  if (removed?.changed === true) {
    backup = backUp(file, backupsDir(req.env), req.agent.name, req.now());
    if (fileRemoved) fs.rmSync(file);
    else writeSettings(file, removed.text, { newMode: 0o644, narrow: false });
  }
  if (tokenReport.state === "revoked") {
    for (const f of tokenReport.files) fs.rmSync(f, { force: true });
    removeIfEmpty(harnessTokenDir(req.env, req.harness));
    record = withTokens(record, req.harness, undefined);
  }
  if (entry !== undefined || tokenReport.state === "revoked") {
    record = withoutInstall(record, key);
    writeInstallRecord(installRecordPath(req.env), record);
  }
  return { ...report, backup, tokens: tokenReport };
}

/**
 * Whether git ignores `file` in the repository whose top is `dir`; undefined when `dir` is not one or git
 * cannot say (git runs in local mode: the repository's own ignore files and `.git/info/exclude`).
 */
async function gitIgnores(dir: string, file: string, env: NodeJS.ProcessEnv): Promise<boolean | undefined> {
  if (!fs.existsSync(path.join(dir, ".git"))) return undefined;
  try {
    return await gitTest(["check-ignore", "-q", file], { repo: dir, mode: "local", env });
  } catch {
    return undefined;
  }
}

function removeIfEmpty(dir: string): void {
  try {
    fs.rmdirSync(dir);
  } catch {
    // Not empty, or not there: either way it stays as it is.
  }
}
