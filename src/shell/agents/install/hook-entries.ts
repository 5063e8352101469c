/**
 * The hook entries `harness agents install` writes, and how it knows them again. One matcher group per
 * event, without a matcher (it matches every tool), holding one handler:
 * - command mode: `<node> <harness CLI> hook <agent> --harness NAME --observer-token FILE --ledger-token
 *   FILE --socket PATH`, every word single-quoted for the shell (the seam with agents-ingest's forwarder);
 * - http mode (Claude Code only): a POST to `http://<[agents] listen>/hooks/claude-code?harness=NAME`
 *   with the two producer tokens in its headers.
 * A handler is ours when its command ends with our `hook <agent> --harness NAME …` words, or its URL is
 * our endpoint for that harness: whatever node, script, token or socket path it names, so a moved state
 * directory or an upgraded Node still leaves uninstall able to find it, and nobody else's hook matches.
 */
import { shellWord } from "../../support/shell-word.js";

export const AGENTS = ["claude-code", "codex"] as const;
export type AgentKind = (typeof AGENTS)[number];
export const isAgentKind = (s: string): s is AgentKind => (AGENTS as readonly string[]).includes(s);

export const HOOK_MODES = ["command", "http"] as const;
export type HookMode = (typeof HOOK_MODES)[number];

/**
 * The events each agent's mapping needs (agents-ingest's `claude-code-map.ts`, `codex-map.ts`), with the
 * timeout in seconds Claude Code or Codex gives the hook. The command hook's forwarder gives up on the
 * daemon well within these (then spools, and answers by `[agents] on_unreachable`); SessionEnd runs while
 * the agent exits, on a short budget of its own. A hook that times out lets the tool run.
 */
export const HOOK_EVENTS: Readonly<Record<AgentKind, Readonly<Record<string, number>>>> = {
  "claude-code": {
    SessionStart: 10,
    SessionEnd: 5,
    UserPromptSubmit: 10,
    PreToolUse: 10,
    PostToolUse: 10,
    PostToolUseFailure: 10,
    PreCompact: 10,
    SubagentStart: 10,
    Stop: 10,
  },
  codex: {
    SessionStart: 10,
    UserPromptSubmit: 10,
    PreToolUse: 10,
    PostToolUse: 10,
    Stop: 10,
  },
};

/** An http hook posts to the daemon on loopback: a few seconds is already a daemon that is not answering. */
const HTTP_TIMEOUT_SECONDS = 5;

/** A harness name that is also a safe directory name for its token files. */
export const HARNESS_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** One shell word as `shellWord` writes it. */
const WORD = String.raw`(?:[A-Za-z0-9_./:=@%+-]+|'(?:[^']|'\\'')*')`;

export interface TokenFiles {
  readonly observer: string;
  readonly ledger: string;
}

export interface CommandHook {
  readonly mode: "command";
  /** The program and script that run the `harness` CLI: absolute, so the hook works from any cwd. */
  readonly launcher: readonly string[];
  readonly tokenFiles: TokenFiles;
  readonly socket: string;
}

export interface HttpHook {
  readonly mode: "http";
  /** `[agents] listen`, `host:port`. */
  readonly listen: string;
  /** The tokens themselves: an http hook's headers cannot read a file. */
  readonly tokens: TokenFiles;
}

export interface HookTarget {
  readonly agent: AgentKind;
  readonly harness: string;
  readonly hook: CommandHook | HttpHook;
}

export interface HookEntry {
  readonly event: string;
  /** The matcher group: `{"hooks": [handler]}`. */
  readonly group: { readonly hooks: readonly Record<string, unknown>[] };
}

export const httpUrl = (listen: string, agent: AgentKind, harness: string): string =>
  `http://${listen}/hooks/${agent}?harness=${encodeURIComponent(harness)}`;

export function hookCommand(target: HookTarget & { readonly hook: CommandHook }): string {
  const { hook } = target;
  return [
    ...hook.launcher,
    "hook",
    target.agent,
    "--harness",
    target.harness,
    "--observer-token",
    hook.tokenFiles.observer,
    "--ledger-token",
    hook.tokenFiles.ledger,
    "--socket",
    hook.socket,
  ]
    .map(shellWord)
    .join(" ");
}

/** The entries an install writes, one per event the agent's mapping needs. */
export function hookEntries(target: HookTarget): HookEntry[] {
  const { hook } = target;
  return Object.entries(HOOK_EVENTS[target.agent]).map(([event, timeout]) => ({
    event,
    group: {
      hooks: [
        hook.mode === "command"
          ? { type: "command", command: hookCommand({ ...target, hook }), timeout }
          : {
              type: "http",
              url: httpUrl(hook.listen, target.agent, target.harness),
              headers: {
                Authorization: `Bearer ${hook.tokens.observer}`,
                "X-Harness-Ledger-Token": hook.tokens.ledger,
              },
              timeout: HTTP_TIMEOUT_SECONDS,
            },
      ],
    },
  }));
}

/** Whether a handler of a settings file is one `install` wrote for this agent and harness. */
export function isOurHandler(handler: unknown, agent: AgentKind, harness: string): boolean {
  if (typeof handler !== "object" || handler === null) return false;
  const h = handler as Record<string, unknown>;
  if (h.type === "command" && typeof h.command === "string") {
    const tail = new RegExp(
      `(?:^| )${shellWord("hook")} ${shellWord(agent)} ${shellWord("--harness")} ${escapeRegExp(shellWord(harness))} ` +
        `${shellWord("--observer-token")} ${WORD} ${shellWord("--ledger-token")} ${WORD} ${shellWord("--socket")} ${WORD}$`,
    );
    return tail.test(h.command);
  }
  if (h.type === "http" && typeof h.url === "string") {
    let url: URL;
    try {
      url = new URL(h.url);
    } catch {
      return false;
    }
    return (
      url.protocol === "http:" &&
      url.pathname === `/hooks/${agent}` &&
      url.search === `?harness=${encodeURIComponent(harness)}`
    );
  }
  return false;
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
