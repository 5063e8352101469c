/**
 * What `harness doctor`'s agents row is made of, gathered from the operator's machine: each install the
 * record lists (`install-record.ts`), checked against the settings file it wrote (are all our entries
 * still there?) and the harness's token files; and the command hook's spool (depth and overflow), read
 * in the one function below. The journal side (each harness's last row) comes from the daemon.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { shellWords } from "../../support/shell-word.js";
import type { AgentAdapter } from "../adapters/adapter.js";
import { type AdapterRegistry, AGENTS } from "../adapters/registry.js";
import type { RemoteDaemon } from "../ingest/hook-limits.js";
import { agentsStateDir, installRecordPath } from "./agent-paths.js";
import { isOurHandler } from "./hook-entries.js";
import { type InstallEntry, type InstallRecord, readInstallRecord } from "./install-record.js";
import { member, nodeValue, parseJsonText } from "./json-text.js";
import { readSettings } from "./settings-file.js";

export interface InstalledAdapter {
  readonly install: InstallEntry;
  /** Our entries found in the settings file, of the events install writes. */
  readonly present: number;
  readonly expected: number;
  /** Why the settings file could not be checked, when it could not. */
  readonly problem: string | undefined;
  /** Token files the hooks name that are not there. */
  readonly missingTokenFiles: readonly string[];
  /** What may keep the agent's hooks from running at all, said when its harness has sent nothing. */
  readonly silentWhy?: string;
  /**
   * A command hook's client, from its first word: the native client, sh and curl, or Node alone (an
   * install from before the fast paths); undefined for an http hook or a command not found.
   */
  readonly client?: "native" | "sh" | "node";
  /** Files the command hook runs (its client, Node, the CLI's script) that are not there. */
  readonly missingPrograms: readonly string[];
  /** A remote install's daemon as its command hook names it (`--daemon`, `--ca-file`, …). */
  readonly remote?: RemoteDaemon;
}

export interface SpoolStatus {
  readonly dir: string;
  /** Calls waiting to be delivered. */
  readonly depth: number;
  /** Calls dropped because the spool was full. */
  readonly overflow: number;
  /** Calls the daemon refused, kept for the operator. */
  readonly failed: number;
  /** Calls whose delivery kept failing (timed out, 5xx), set aside for the operator. */
  readonly setAside: number;
}

export interface AgentsStatus {
  readonly adapters: readonly InstalledAdapter[];
  /** Why the record of installs could not be read, when it could not. */
  readonly recordProblem: string | undefined;
  readonly spool: SpoolStatus;
}

/** A spooled call's file name, as `../forwarder/spool.ts` writes it. */
const SPOOL_ENTRY = /^\d{15}-\d+-\d+\.json$/;

/**
 * The spool's state, from the files `../forwarder/spool.ts` documents: one
 * `<time>-<pid>-<n>.json` per waiting call, `overflow` holding the count of calls dropped when it was
 * full, `failed/` the calls the daemon refused, `set-aside/` those whose delivery kept failing.
 */
export function readSpoolStatus(env: NodeJS.ProcessEnv): SpoolStatus {
  const dir = path.join(agentsStateDir(env), "spool");
  const count = (d: string) => {
    try {
      return fs.readdirSync(d).filter((f) => SPOOL_ENTRY.test(f)).length;
    } catch {
      return 0;
    }
  };
  let overflow = 0;
  try {
    const n = Number(fs.readFileSync(path.join(dir, "overflow"), "utf8").trim());
    if (Number.isSafeInteger(n) && n > 0) overflow = n;
  } catch {
    // No overflow file: nothing was dropped.
  }
  return {
    dir,
    depth: count(dir),
    overflow,
    failed: count(path.join(dir, "failed")),
    setAside: count(path.join(dir, "set-aside")),
  };
}

function checkAdapter(
  install: InstallEntry,
  record: InstallRecord,
  agents: AdapterRegistry,
): InstalledAdapter {
  const agent = agents.agent(install.agent);
  if (agent === undefined)
    return {
      install,
      present: 0,
      expected: 0,
      missingPrograms: [],
      problem: `this harness knows no agent ${install.agent}`,
      missingTokenFiles: [],
    };
  return checkInstalled(install, record, agent);
}

function checkInstalled(install: InstallEntry, record: InstallRecord, agent: AgentAdapter): InstalledAdapter {
  const events = Object.keys(agent.install.events);
  const expected = events.length;
  const tokens = record.tokens[install.harness];
  // A command hook reads its token files; an http hook carries its tokens in the settings file itself.
  const tokenFiles =
    install.mode === "http" || tokens === undefined ? [] : [tokens.observer.file, tokens.ledger.file];
  const missingTokenFiles = tokenFiles.filter((f) => !fs.existsSync(f));
  const base = {
    install,
    expected,
    missingTokenFiles,
    missingPrograms: [] as string[],
    ...(agent.install.silentWhy === undefined ? {} : { silentWhy: agent.install.silentWhy }),
  };
  try {
    const text = readSettings(install.file);
    if (text === undefined) return { ...base, present: 0, problem: "the file is gone" };
    const root = parseJsonText(text);
    const hooks = root.kind === "object" ? member(root, "hooks")?.value : undefined;
    let present = 0;
    let command: string | undefined;
    if (hooks?.kind === "object")
      for (const event of events) {
        const groups = member(hooks, event)?.value;
        const value = groups === undefined ? undefined : nodeValue(text, groups);
        const ours = Array.isArray(value)
          ? value
              .flatMap((g: { hooks?: unknown }) => (Array.isArray(g?.hooks) ? g.hooks : []))
              .find((h) => isOurHandler(h, agent, install.harness))
          : undefined;
        if (ours === undefined) continue;
        present++;
        if (typeof ours.command === "string") command ??= ours.command;
      }
    return { ...base, ...launcherStatus(command), present, problem: undefined };
  } catch (e) {
    return { ...base, present: 0, problem: (e as Error).message };
  }
}

/**
 * The command hook's client and the files it runs that are gone, from its words before `hook`; and a
 * remote install's daemon, from its `--daemon` words.
 */
function launcherStatus(
  command: string | undefined,
): Pick<InstalledAdapter, "client" | "missingPrograms" | "remote"> {
  const words = command === undefined ? undefined : shellWords(command);
  const end = words?.indexOf("hook") ?? -1;
  if (words === undefined || end < 1) return { missingPrograms: [] };
  const launcher = words.slice(0, end);
  const first = path.basename(launcher[0] as string);
  const after = (flag: string) => {
    const i = words.indexOf(flag, end);
    return i < 0 ? undefined : words[i + 1];
  };
  const url = after("--daemon");
  const [caFile, clientCert, clientKey] = ["--ca-file", "--client-cert", "--client-key"].map(after);
  return {
    client: first.startsWith("hook-client-") ? "native" : first === "sh" ? "sh" : "node",
    missingPrograms: launcher.filter((f) => path.isAbsolute(f) && !fs.existsSync(f)),
    ...(url === undefined
      ? {}
      : {
          remote: {
            url,
            ...(caFile === undefined ? {} : { caFile }),
            ...(clientCert === undefined || clientKey === undefined ? {} : { clientCert, clientKey }),
          },
        }),
  };
}

/** What is installed, checked against the agents of `agents` (the registry this build knows by default). */
export function agentsStatus(env: NodeJS.ProcessEnv, agents: AdapterRegistry = AGENTS): AgentsStatus {
  const spool = readSpoolStatus(env);
  try {
    const record = readInstallRecord(installRecordPath(env));
    return {
      adapters: record.installs.map((i) => checkAdapter(i, record, agents)),
      recordProblem: undefined,
      spool,
    };
  } catch (e) {
    return { adapters: [], recordProblem: (e as Error).message, spool };
  }
}
