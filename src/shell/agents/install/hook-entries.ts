/**
 * The hook entries `harness agents install` writes, and how it knows them again. One matcher group per
 * event the agent's record names, without a matcher (it matches every tool), holding one handler:
 * - command mode: `<node> <harness CLI> hook <hook> --harness NAME --observer-token FILE --ledger-token
 *   FILE --socket PATH [--fail closed|open]`, every word single-quoted for the shell (the seam with the
 *   forwarder), `<hook>` the agent's first hook format; a remote install (decision 0017) has `--daemon
 *   URL [--ca-file F] [--client-cert F --client-key F]` where the socket was;
 * - http mode (an agent whose hooks can post): a POST to
 *   `http://<[agents] listen>/hooks/<hook>?harness=NAME[&fail=closed|open]` with the two producer tokens
 *   in its headers; a remote install posts to `https://HOST:PORT/hooks/…` with the tokens read from
 *   environment variables its `allowedEnvVars` names, never written in the file.
 * A harness installed `--fail closed` also gets the agent's own fail-closed field on its gating hooks,
 * where the agent has one (`AgentAdapter.install.failClosed`).
 * A handler is ours when its command ends with our `hook <hook> --harness NAME …` words, or its URL is
 * our endpoint for that harness: whatever node, script, token or socket path it names, so a moved state
 * directory or an upgraded Node still leaves uninstall able to find it, and nobody else's hook matches.
 */
import { shellWord } from "../../support/shell-word.js";
import type { AgentAdapter } from "../adapters/adapter.js";
import { FAIL_QUERY, HOOK_FAIL_MODES, type HookFailMode } from "../ingest/fail-mode.js";
import type { RemoteDaemon } from "../ingest/hook-limits.js";
import { HOOK_PATH_PREFIX } from "../ingest/hook-limits.js";

/** An http hook posts to the daemon on loopback: a few seconds is already a daemon that is not answering. */
const HTTP_TIMEOUT_SECONDS = 5;
/** Across a network, a handshake and a round trip more. */
const REMOTE_HTTP_TIMEOUT_SECONDS = 10;

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
  /** A remote install's daemon: the hook posts there over https, and not to `socket`. */
  readonly daemon?: RemoteDaemon;
}

export interface HttpHook {
  readonly mode: "http";
  /** `[agents] listen`, `host:port`. */
  readonly listen: string;
  /** The tokens themselves: an http hook's headers cannot read a file. */
  readonly tokens: TokenFiles;
  /**
   * A remote install: the daemon's `https://host:port`, and the names of the environment variables the
   * agent reads the tokens from (`tokens` is then not written).
   */
  readonly remote?: { readonly url: string; readonly env: TokenFiles };
}

export interface HookTarget {
  readonly agent: AgentAdapter;
  readonly harness: string;
  readonly hook: CommandHook | HttpHook;
  /** The harness's own fail mode; absent, `[agents] on_unreachable` decides (`../ingest/fail-mode.ts`). */
  readonly fail?: HookFailMode;
}

export interface HookEntry {
  readonly event: string;
  /** The matcher group: `{"hooks": [handler]}`. */
  readonly group: { readonly hooks: readonly Record<string, unknown>[] };
}

/** The name its hooks are installed under: the agent's first hook format's. */
const hookName = (agent: AgentAdapter): string => agent.hooks[0].name;

/** `origin`: `http://<listen>`, or a remote install's `https://host:port`. */
export const httpUrl = (origin: string, agent: AgentAdapter, harness: string, fail?: HookFailMode): string =>
  `${origin}${HOOK_PATH_PREFIX}${hookName(agent)}?harness=${encodeURIComponent(harness)}${fail === undefined ? "" : `&${FAIL_QUERY}=${fail}`}`;

/**
 * The environment variables a remote http hook reads harness NAME's tokens from:
 * `HARNESS_<NAME>_OBSERVER_TOKEN` and `…_LEDGER_TOKEN`, NAME upper-cased, `.` and `-` as `_`.
 */
export function tokenEnvNames(harness: string): TokenFiles {
  const name = harness.toUpperCase().replace(/[.-]/g, "_");
  return { observer: `HARNESS_${name}_OBSERVER_TOKEN`, ledger: `HARNESS_${name}_LEDGER_TOKEN` };
}

/** Where a command hook sends its calls: the socket, or a remote daemon and its TLS files. */
function whereArgs(hook: CommandHook): string[] {
  const d = hook.daemon;
  if (d === undefined) return ["--socket", hook.socket];
  return [
    "--daemon",
    d.url,
    ...(d.caFile === undefined ? [] : ["--ca-file", d.caFile]),
    ...(d.clientCert === undefined || d.clientKey === undefined
      ? []
      : ["--client-cert", d.clientCert, "--client-key", d.clientKey]),
  ];
}

/** The command hook's words, for the agent's hook format `name` (its first unless told). */
export function hookArgv(target: HookTarget & { readonly hook: CommandHook }, name = hookName(target.agent)) {
  const { hook } = target;
  return [
    ...hook.launcher,
    "hook",
    name,
    "--harness",
    target.harness,
    "--observer-token",
    hook.tokenFiles.observer,
    "--ledger-token",
    hook.tokenFiles.ledger,
    ...whereArgs(hook),
    ...(target.fail === undefined ? [] : ["--fail", target.fail]),
  ];
}

export const hookCommand = (target: HookTarget & { readonly hook: CommandHook }): string =>
  hookArgv(target).map(shellWord).join(" ");

/** The entries an install writes, one per event the agent's mapping needs. */
export function hookEntries(target: HookTarget): HookEntry[] {
  const { hook } = target;
  const closed = target.fail === "closed" ? target.agent.install.failClosed : undefined;
  return Object.entries(target.agent.install.events).map(([event, timeout]) => ({
    event,
    group: {
      hooks: [
        {
          ...(hook.mode === "command"
            ? { type: "command", command: hookCommand({ ...target, hook }), timeout }
            : hook.remote !== undefined
              ? {
                  type: "http",
                  url: httpUrl(hook.remote.url, target.agent, target.harness, target.fail),
                  headers: {
                    Authorization: `Bearer $${hook.remote.env.observer}`,
                    "X-Harness-Ledger-Token": `$${hook.remote.env.ledger}`,
                  },
                  allowedEnvVars: [hook.remote.env.observer, hook.remote.env.ledger],
                  timeout: REMOTE_HTTP_TIMEOUT_SECONDS,
                }
              : {
                  type: "http",
                  url: httpUrl(`http://${hook.listen}`, target.agent, target.harness, target.fail),
                  headers: {
                    Authorization: `Bearer ${hook.tokens.observer}`,
                    "X-Harness-Ledger-Token": hook.tokens.ledger,
                  },
                  timeout: HTTP_TIMEOUT_SECONDS,
                }),
          ...(closed?.events.includes(event) === true ? closed.field : {}),
        },
      ],
    },
  }));
}

/** Whether a handler of a settings file is one `install` wrote for this agent and harness. */
export function isOurHandler(handler: unknown, agent: AgentAdapter, harness: string): boolean {
  if (typeof handler !== "object" || handler === null) return false;
  const h = handler as Record<string, unknown>;
  if (h.type === "command" && typeof h.command === "string") {
    const tail = new RegExp(
      `(?:^| )${shellWord("hook")} ${shellWord(hookName(agent))} ${shellWord("--harness")} ${escapeRegExp(shellWord(harness))} ` +
        `${shellWord("--observer-token")} ${WORD} ${shellWord("--ledger-token")} ${WORD} ` +
        `(?:${shellWord("--socket")} ${WORD}|${shellWord("--daemon")} ${WORD}(?: ${shellWord("--ca-file")} ${WORD})?` +
        `(?: ${shellWord("--client-cert")} ${WORD} ${shellWord("--client-key")} ${WORD})?)` +
        `(?: ${shellWord("--fail")} (?:${HOOK_FAIL_MODES.map(shellWord).join("|")}))?$`,
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
    const search = `?harness=${encodeURIComponent(harness)}`;
    return (
      (url.protocol === "http:" || url.protocol === "https:") &&
      url.pathname === `${HOOK_PATH_PREFIX}${hookName(agent)}` &&
      [undefined, ...HOOK_FAIL_MODES].some(
        (fail) => url.search === (fail === undefined ? search : `${search}&${FAIL_QUERY}=${fail}`),
      )
    );
  }
  return false;
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
