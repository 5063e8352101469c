#!/usr/bin/env node
/**
 * The `harness` command line. Each command's work lives in its own module, imported only when its
 * command runs: a supervisor calls `harness rules admission` before every spawn, and it should not pay
 * for the CEL parser, the store and the daemon to ask one question.
 */
import { cac } from "cac";
import { AGENTS } from "../agents/adapters/registry.js";
import { packageVersion } from "../support/version.js";

const cli = cac("harness");

/** The process's streams: the one place a command's `Io` comes from. */
const io = {
  env: process.env,
  out: (line: string) => process.stdout.write(`${line}\n`),
  err: (line: string) => process.stderr.write(`${line}\n`),
};

// A reader that goes away (`harness rules list | head -3`) ends the command, quietly: what it wanted is
// printed, and the rest has nowhere to go.
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code === "EPIPE") process.exit(0);
  throw e;
});

// A daemon on another machine, over TLS (decisions 0014, 0018): every command that reaches a daemon takes
// it; `[client] daemon` in the global config is its default.
cli
  .option(
    "--daemon <url>",
    "A remote daemon, https://host:port (default [client] daemon; with the operator's tokens, or a producer's)",
  )
  .option("--ca-file <path>", "with --daemon: the CA that signed the daemon's certificate")
  .option(
    "--client-cert <path>",
    "with --daemon: this client's certificate, when the daemon asks for one (mutual TLS)",
  )
  .option("--client-key <path>", "with --daemon: the client certificate's key");

/** `--daemon` and its TLS files, as the client commands take them. */
const remote = (o: ClientOptions) => ({
  daemon: o.daemon,
  caFile: o.caFile,
  clientCert: o.clientCert,
  clientKey: o.clientKey,
});

const unknownVerb = (group: string, verb: string, expected: string): void => {
  io.err(`harness ${group}: unknown verb '${verb}' (expected: ${expected})`);
  process.exitCode = 2;
};

// cac has no nested commands, so each group (`cel`, `rules`, `policy`…) takes its verb as an argument.
cli
  .command("cel <verb> <expr>", "CEL tools. Verbs: parse (print the canonical form, or the errors)")
  .option("--json", "Print the result as JSON")
  .example(`harness cel parse 'event.type == "tool" && event.is_error'`)
  .action(async (verb: string, expr: string, options: { json?: boolean }) => {
    if (verb !== "parse") {
      unknownVerb("cel", verb, "parse");
      return;
    }
    const { runCelParse } = await import("./commands/cel-parse.js");
    process.exitCode = runCelParse(expr, options, io);
  });

interface ClientOptions {
  socket?: string;
  daemon?: string;
  caFile?: string;
  clientCert?: string;
  clientKey?: string;
  config?: string;
  store?: string;
  json?: boolean;
  rule?: string;
  tokenFile?: string;
}

interface StoreCliOptions extends ClientOptions {
  from?: string;
  to?: string;
  passwordFile?: string;
}

interface JournalCliOptions extends ClientOptions {
  harness?: string;
  lines?: string | number;
  follow?: boolean;
}

interface AgentsCliOptions {
  harness?: string;
  project?: string;
  user?: boolean;
  mode?: string;
  fail?: string;
  dryRun?: boolean;
  enrolFile?: string;
  entry?: string;
  all?: boolean;
  daemon?: string;
  rpc?: string;
}

interface RulesOptions extends ClientOptions {
  strict?: boolean;
  harness?: string;
  released?: boolean;
  limit?: string | number;
  since?: string;
  diff?: boolean;
  policyRepo?: string;
  dryRun?: boolean;
  includeSilent?: boolean;
  state?: string;
}

cli
  .command(
    "daemon",
    "Run the rules daemon: journal, evaluator and actions (defaults when there is no config)",
  )
  .option("--store <path>", "The SQLite store (default $XDG_STATE_HOME/harness/harness.db)")
  .option("--config <path>", "The global config (default $XDG_CONFIG_HOME/harness/harness.toml)")
  .option("--socket <path>", "The Unix socket (default [server] socket, else $XDG_RUNTIME_DIR/harness.sock)")
  .option("--json", "Print the start line as one JSON object on stdout")
  .action(async (o: ClientOptions) => {
    const { runDaemon } = await import("./commands/daemon.js");
    process.exitCode = await runDaemon(
      { store: o.store, config: o.config, socket: o.socket, json: o.json },
      io,
    );
  });

cli
  .command(
    "journal <verb> [file]",
    "The rule journal. Verbs: append (JSON Lines on stdin), import FILE (into a store no daemon holds), tail [--harness NAME] [-n N] [--follow] (the last rows, then new ones)",
  )
  .option("--store <path>", "import: the store to write")
  .option("--token-file <path>", "append: the producer credential (or HARNESS_PRODUCER_TOKEN_FILE)")
  .option("--socket <path>", "append, tail: the daemon's socket")
  .option("--config <path>", "The global config")
  .option("--json", "Print results as JSON")
  .option("--harness <name>", "tail: only this harness's rows")
  .option("-n, --lines <n>", "tail: how many of the last rows (default 20, at most 1000)")
  .option("--follow", "tail: keep printing rows as they commit, until interrupted")
  .action(async (verb: string, file: string | undefined, o: JournalCliOptions) => {
    if (verb === "tail") {
      const { runJournalTail } = await import("./commands/journal-tail.js");
      const stop = new AbortController();
      for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => stop.abort());
      process.exitCode = await runJournalTail(
        {
          socket: o.socket,
          config: o.config,
          json: o.json === true,
          ...remote(o),
          harness: o.harness,
          lines: o.lines,
          follow: o.follow === true,
        },
        io,
        stop.signal,
      );
    } else if (verb === "append") {
      const { runJournalAppend } = await import("./commands/journal-append.js");
      process.exitCode = await runJournalAppend(
        {
          ...(o.socket === undefined ? {} : { socket: o.socket }),
          ...(o.config === undefined ? {} : { config: o.config }),
          ...(o.tokenFile === undefined ? {} : { tokenFile: o.tokenFile }),
          json: o.json === true,
          ...remote(o),
        },
        process.stdin,
        io,
      );
    } else if (verb === "import") {
      if (file === undefined) {
        io.err("harness journal import: FILE is required");
        process.exitCode = 2;
        return;
      }
      const { runJournalImport } = await import("./commands/journal-import.js");
      process.exitCode = await runJournalImport(
        file,
        { ...(o.store === undefined ? {} : { store: o.store }), json: o.json === true },
        io,
      );
    } else unknownVerb("journal", verb, "append, import, tail");
  });

const RULES_VERBS = [
  "admission",
  "clear",
  "resume",
  "list",
  "show",
  "explain",
  "holds",
  "backtest",
  "watch",
  "lint",
  "propose",
  "proposals",
  "enforce",
] as const;
type RulesVerb = (typeof RULES_VERBS)[number];
const isRulesVerb = (v: string): v is RulesVerb => (RULES_VERBS as readonly string[]).includes(v);

cli
  .command(
    "rules <verb> [arg]",
    "Rules. Verbs: list, show <name>, enforce <name> (print the [memory.rules] enforce line that pins it), explain <fire-id> | explain --harness NAME, holds [--harness NAME], backtest <file> [--since 30d] [--diff], watch (events as they commit), admission <harness> (may it run now?), clear <harness> [--rule NAME], resume <run> (release a stopped agent run), lint [DIR] (check a policy repo checkout, offline), propose [--policy-repo NAME] [--dry-run] [--include-silent] (stored proposals become pull requests), proposals [--state S]",
  )
  .option("--since <duration>", "backtest: replay the rows admitted in the last DURATION (default 30d)")
  .option("--store <path>", "backtest: the store to replay when no daemon answers (default the daemon's)")
  .option("--diff", "backtest: the fires the file adds and removes against the loaded rule of its name")
  .option("--strict", "lint: count warnings as errors")
  .option("--rule <name>", "clear: only this rule's hold")
  .option("--harness <name>", "explain: that harness's holds and fires; holds: only that harness's")
  .option("--released", "holds: also list released holds, newest first")
  .option("--limit <n>", "explain --harness, holds: at most this many fires or released holds (default 100)")
  .option("--policy-repo <name>", "propose: the policy repo (required when more than one is declared)")
  .option("--dry-run", "propose: do every read and check, print what it would do, change nothing")
  .option("--include-silent", "propose: also propose what fired 0 times in its stored backtest")
  .option("--state <state>", "proposals: only the proposals in this state")
  .option("--socket <path>", "The daemon's socket")
  .option("--config <path>", "The global config")
  .option("--json", "Print the result as JSON")
  .action(async (verb: string, arg: string | undefined, o: RulesOptions) => {
    if (!isRulesVerb(verb)) {
      unknownVerb("rules", verb, RULES_VERBS.join(", "));
      return;
    }
    if (verb === "lint") {
      // Lint reads the checkout alone: no config, store or daemon, so it imports none of them.
      const { runLint } = await import("./commands/rules-lint.js");
      process.exitCode = runLint(arg ?? ".", { json: o.json, strict: o.strict }, io);
      return;
    }
    const common = { socket: o.socket, config: o.config, json: o.json, ...remote(o) };
    if (verb === "propose") {
      const { runPropose } = await import("./commands/rules-propose.js");
      process.exitCode = await runPropose(
        {
          ...common,
          policyRepo: o.policyRepo,
          dryRun: o.dryRun === true,
          includeSilent: o.includeSilent === true,
        },
        io,
      );
      return;
    }
    if (verb === "proposals") {
      const { runProposals } = await import("./commands/rules-proposals.js");
      process.exitCode = await runProposals({ ...common, state: o.state }, io);
      return;
    }
    const limit = o.limit === undefined ? undefined : Number(o.limit);
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
      io.err(`harness rules ${verb}: --limit must be a positive whole number`);
      process.exitCode = 2;
      return;
    }
    // An empty argument is a missing one: a supervisor's unset variable must not be admitted.
    const needs = (what: string): string | undefined => {
      if (arg === undefined || arg === "") {
        io.err(`harness rules ${verb}: ${what} is required`);
        process.exitCode = 2;
        return undefined;
      }
      return arg;
    };
    if (verb === "admission" || verb === "clear") {
      const harness = needs("<harness>");
      if (harness === undefined) return;
      const { runAdmission, runClear } = await import("./commands/rules-admission.js");
      process.exitCode =
        verb === "admission"
          ? await runAdmission(harness, common, io)
          : await runClear(harness, { ...common, rule: o.rule }, io);
      return;
    }
    if (verb === "resume") {
      const run = needs("<run>");
      if (run === undefined) return;
      const { runResume } = await import("./commands/rules-resume.js");
      process.exitCode = await runResume(run, common, io);
      return;
    }
    if (verb === "watch") {
      const { runWatch } = await import("./commands/rules-watch.js");
      const stop = new AbortController();
      for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => stop.abort());
      process.exitCode = await runWatch(common, io, stop.signal);
      return;
    }
    if (verb === "backtest") {
      const file = needs("<file>");
      if (file === undefined) return;
      const { runBacktest } = await import("./commands/rules-backtest.js");
      process.exitCode = await runBacktest(
        file,
        {
          ...common,
          since: o.since === undefined ? undefined : String(o.since),
          store: o.store,
          diff: o.diff === true,
        },
        io,
      );
      return;
    }
    if (verb === "list") {
      const { runList } = await import("./commands/rules-list.js");
      process.exitCode = await runList(common, io);
    } else if (verb === "holds") {
      const { runHolds } = await import("./commands/rules-holds.js");
      process.exitCode = await runHolds({ ...common, harness: o.harness, released: o.released, limit }, io);
    } else if (verb === "show") {
      const name = needs("<name>");
      if (name === undefined) return;
      const { runShow } = await import("./commands/rules-show.js");
      process.exitCode = await runShow(name, common, io);
    } else if (verb === "enforce") {
      const name = needs("<name>");
      if (name === undefined) return;
      const { runEnforce } = await import("./commands/rules-enforce.js");
      process.exitCode = await runEnforce(name, common, io);
    } else if ((arg === undefined) === (o.harness === undefined)) {
      io.err("harness rules explain: give either <fire-id> or --harness NAME");
      process.exitCode = 2;
    } else {
      const { runExplainFire, runExplainHarness } = await import("./commands/rules-explain.js");
      process.exitCode =
        arg === undefined
          ? await runExplainHarness(o.harness as string, { ...common, limit }, io)
          : await runExplainFire(arg, common, io);
    }
  });

cli
  .command(
    "policy <verb> [name]",
    "Policy repos. Verbs: sync [NAME] (clone or fast-forward each declared repo, or NAME; the daemon reloads), init DIR (a new local policy repo with an example hold rule and its test)",
  )
  .option("--socket <path>", "The daemon's socket")
  .option("--config <path>", "The global config")
  .option("--json", "Print the result as JSON")
  .action(async (verb: string, name: string | undefined, o: ClientOptions) => {
    if (verb === "init") {
      if (name === undefined || name === "") {
        io.err("harness policy init: DIR is required");
        process.exitCode = 2;
        return;
      }
      const { runPolicyInit } = await import("./commands/policy-init.js");
      process.exitCode = await runPolicyInit(name, { config: o.config, json: o.json }, io);
      return;
    }
    if (verb !== "sync") {
      unknownVerb("policy", verb, "sync, init");
      return;
    }
    const { runPolicySync } = await import("./commands/policy-sync.js");
    process.exitCode = await runPolicySync(name, { socket: o.socket, config: o.config, json: o.json }, io);
  });

cli
  .command("doctor", "Check the daemon and the rule set (REQ-19's rules row); exit 1 on a failure")
  .option("--socket <path>", "The daemon's socket")
  .option("--config <path>", "The global config")
  .option("--json", "Print the checks as JSON")
  .action(async (o: ClientOptions) => {
    const { runDoctor } = await import("./commands/doctor.js");
    process.exitCode = await runDoctor(
      { socket: o.socket, config: o.config, json: o.json, ...remote(o) },
      io,
    );
  });

cli
  .command(
    "tui",
    "The operator's console: fires, shadowing rules, holds, proposals, annotations, rules (? for keys)",
  )
  .option("--socket <path>", "The daemon's socket")
  .option("--config <path>", "The global config")
  .action(async (o: ClientOptions) => {
    // React's development build records each render as a performance measure that is never cleared:
    // over an hour of a busy fleet, hundreds of megabytes. The console runs React's production build,
    // chosen by this variable when React is first loaded, just below.
    process.env.NODE_ENV = "production";
    const { runTui } = await import("./commands/tui.js");
    process.exitCode = await runTui({ socket: o.socket, config: o.config, ...remote(o) }, io);
  });

cli
  .command("reload", "Make the daemon reread its config and rule set (needs the operator's control token)")
  .option("--socket <path>", "The daemon's socket")
  .option("--config <path>", "The global config")
  .option("--json", "Print the result as JSON")
  .option("--defaults", "Reload on all defaults when the daemon's config file is gone (else an error)")
  .action(async (o: ClientOptions & { defaults?: boolean }) => {
    const { runReload } = await import("./commands/reload.js");
    process.exitCode = await runReload(
      { socket: o.socket, config: o.config, json: o.json, defaults: o.defaults, ...remote(o) },
      io,
    );
  });

interface DemoFlags {
  seconds?: number;
  keep?: boolean;
  json?: boolean;
  keepRunning?: boolean;
  otelEndpoint?: string;
  otelProtocol?: string;
}

cli
  .command(
    "demo",
    "Watch the starter rules on a simulated fleet (a temporary daemon; nothing of yours is touched)",
  )
  .option("--seconds <n>", "About how long the fleet runs (default 20)")
  .option("--keep", "Keep the temporary directory and print where it is")
  .option("--json", "Print each event as a JSON line")
  .option("--keep-running", "After the demo, the fleet keeps working until Ctrl-C (for harness tui)")
  .option("--otel-endpoint <url>", "Export the demo's decisions to this OTLP/HTTP logs endpoint")
  .option("--otel-protocol <p>", "With --otel-endpoint: http/protobuf (default) or http/json")
  .action(async (o: DemoFlags) => {
    const { runDemo } = await import("./commands/demo.js");
    process.exitCode = await runDemo(
      {
        ...(o.seconds === undefined ? {} : { seconds: Number(o.seconds) }),
        ...(o.keep === true ? { keep: true } : {}),
        ...(o.json === true ? { json: true } : {}),
        ...(o.keepRunning === true ? { keepRunning: true } : {}),
        ...(o.otelEndpoint === undefined
          ? {}
          : {
              otel: { endpoint: String(o.otelEndpoint), protocol: String(o.otelProtocol ?? "http/protobuf") },
            }),
      },
      io,
    );
  });

interface TokenOptions extends ClientOptions {
  producer?: string;
  read?: boolean;
  gateway?: boolean;
  enrol?: boolean;
  control?: boolean;
  harness?: string;
  run?: string;
  label?: string;
  ttl?: string;
  out?: string;
  force?: boolean;
  all?: boolean;
}

cli
  .command(
    "token <verb> [...ids]",
    "Credentials the daemon issues (control token needed). Verbs: create (--producer SOURCE [--harness NAME] | --read, --out FILE; or --gateway --harness NAME [--run RUN], printed; or --enrol --harness NAME [--ttl 1h], a one-time code a machine enrols with, printed; or --control --label NAME --out FILE, an operator's own control token), list [--all], revoke ID… | --run RUN, rotate-control (a new control token in its file; the old one refused)",
  )
  .option(
    "--producer <source>",
    "create: a producer token for this source (observer, ledger, loopguard, graph, facts)",
  )
  .option("--read", "create: a read token, for TCP callers")
  .option("--gateway", "create: a token for the MCP gateway (HARNESS_MCP_TOKEN)")
  .option(
    "--control",
    "create: an operator's own control token, with --label NAME and --out FILE: what it does is recorded under NAME",
  )
  .option(
    "--enrol",
    "create: a one-time enrolment code for --harness (1h unless --ttl, at most 7d): harness agents install --enrol-file spends it for the harness's own tokens",
  )
  .option("--harness <name>", "create: the harness a producer token may append for, or a gateway token's")
  .option("--run <run>", "create: the run a gateway token is bound to; revoke: every gateway token of it")
  .option("--label <text>", "create: a note for the list")
  .option("--ttl <duration>", "create: expire after this long (e.g. 12h, 7d)")
  .option("--out <file>", "create: write the token to this file (0600) instead of printing it")
  .option("--force", "create: replace an existing --out file")
  .option("--all", "list: also revoked and expired tokens")
  .option("--socket <path>", "The daemon's socket")
  .option("--config <path>", "The global config")
  .option("--json", "Print the result as JSON")
  .action(async (verb: string, ids: string[], o: TokenOptions) => {
    const common = { socket: o.socket, config: o.config, json: o.json, ...remote(o) };
    const { runTokenCreate, runTokenList, runTokenRevoke, runTokenRotateControl } = await import(
      "./commands/token.js"
    );
    if (verb === "create") process.exitCode = await runTokenCreate({ ...o, ...common }, io);
    else if (verb === "list") process.exitCode = await runTokenList({ ...common, all: o.all }, io);
    else if (verb === "revoke") process.exitCode = await runTokenRevoke(ids, { ...common, run: o.run }, io);
    else if (verb === "rotate-control") process.exitCode = await runTokenRotateControl(common, io);
    else unknownVerb("token", verb, "create, list, revoke, rotate-control");
  });

cli
  .command(
    "config <verb> [dir]",
    "Configuration. Verbs: check [DIR] (the global config, and the project file found from DIR)",
  )
  .option("--config <path>", "The global config")
  .option("--json", "Print the findings as JSON")
  .action(async (verb: string, dir: string | undefined, o: ClientOptions) => {
    if (verb !== "check") {
      unknownVerb("config", verb, "check");
      return;
    }
    const { runConfigCheck } = await import("./commands/config-check.js");
    process.exitCode = await runConfigCheck(dir, { config: o.config, json: o.json }, io);
  });

cli
  .command(
    "store <verb> [path]",
    "The store. Verbs: backup PATH (an online, consistent copy while the daemon runs; PATH must not exist), copy --from PATH --to URL (into an empty PostgreSQL database, verified row for row)",
  )
  .option("--store <path>", "backup: the SQLite store (default $XDG_STATE_HOME/harness/harness.db)")
  .option("--from <path>", "copy: the SQLite store (default $XDG_STATE_HOME/harness/harness.db)")
  .option("--to <url>", "copy: the PostgreSQL database, postgresql://[user@]host[:port]/database")
  .option("--password-file <path>", "copy: the database user's password, from a file only its owner reads")
  .option("--json", "Print the result as JSON")
  .action(async (verb: string, target: string | undefined, o: StoreCliOptions) => {
    if (verb === "copy") {
      if (target !== undefined) {
        io.err("harness store copy: takes --from PATH and --to URL, not a PATH of its own");
        process.exitCode = 2;
        return;
      }
      const { runStoreCopy } = await import("./commands/store-copy.js");
      process.exitCode = await runStoreCopy(
        { from: o.from, to: o.to, passwordFile: o.passwordFile, json: o.json === true },
        io,
      );
      return;
    }
    if (verb !== "backup") {
      unknownVerb("store", verb, "backup, copy");
      return;
    }
    if (target === undefined) {
      io.err("harness store backup: PATH is required");
      process.exitCode = 2;
      return;
    }
    const { runStoreBackup } = await import("./commands/store-backup.js");
    process.exitCode = await runStoreBackup(
      target,
      { ...(o.store === undefined ? {} : { store: o.store }), json: o.json === true },
      io,
    );
  });

cli
  .command("mcp", "The MCP gateway for an agent: a stdio relay to the daemon, with HARNESS_MCP_TOKEN")
  .option("--socket <path>", "The daemon's socket (the gateway's is beside it)")
  .option("--config <path>", "The global config")
  .option("--token-file <path>", "The gateway token from this file (0600) rather than HARNESS_MCP_TOKEN")
  .action(async (o: ClientOptions) => {
    const { runMcp } = await import("./commands/mcp.js");
    const options = { socket: o.socket, config: o.config, tokenFile: o.tokenFile, ...remote(o) };
    const code = await runMcp(options, io, {
      stdin: process.stdin,
      stdout: process.stdout,
    });
    // stdin may still be open: the session is over, so is the relay, once stdout has drained.
    process.stdout.write("", () => process.exit(code));
  });

cli
  .command(
    "miner <verb> <name>",
    "Rule miners. Verbs: run NAME (one run of NAME's one-shot with the MCP gateway; needs the control token)",
  )
  .option("--socket <path>", "The daemon's socket")
  .option("--config <path>", "The global config")
  .option("--json", "Print the run and its outcome as JSON")
  .action(async (verb: string, name: string, o: ClientOptions) => {
    if (verb !== "run") {
      unknownVerb("miner", verb, "run");
      return;
    }
    const { runMinerRun } = await import("./commands/miner-run.js");
    process.exitCode = await runMinerRun(
      name,
      { socket: o.socket, config: o.config, json: o.json, ...remote(o) },
      io,
    );
  });

// `bin.ts` runs `harness hook` before this module loads; this entry serves `node main.js hook …` alike.
cli
  .command(
    "hook <adapter> [json]",
    `An agent's command hook (${AGENTS.hookNames.join(", ")}): forwards the payload on stdin to the daemon and prints its answer (docs/agents-mapping.md)`,
  )
  .allowUnknownOptions()
  .option("--harness <name>", "The harness the agent runs as")
  .option("--observer-token <file>", "The observer producer token")
  .option("--ledger-token <file>", "The ledger producer token")
  .option("--socket <path>", "The daemon's socket")
  .option(
    "--daemon <url>",
    "A remote daemon's hook endpoint, https://HOST:PORT (with --ca-file, --client-cert, --client-key): git facts computed here and sent with the call",
  )
  .option("--config <path>", "The global config ([agents] on_unreachable, [server] socket)")
  .option("--timeout <ms>", "How long to wait for the daemon (default 5000)")
  .action(async () => {
    const { runCommandHook } = await import("../agents/forwarder/hook-forwarder.js");
    const { readStdin } = await import("../agents/forwarder/hook-stdio.js");
    process.exitCode = await runCommandHook(process.argv.slice(process.argv.indexOf("hook") + 1), {
      env: process.env,
      stdin: (limit) => readStdin(limit, () => process.stdin),
      out: (text) => process.stdout.write(text),
      err: io.err,
    });
  });

cli
  .command(
    "agents <verb> [agent]",
    `Hook adapters that feed ${AGENTS.agents.map((a) => a.title).join(" or ")} sessions into the journal (docs/agents.md). Verbs: install ${AGENTS.agentNames.join("|")} --harness NAME, uninstall ${AGENTS.agentNames.join("|")} --harness NAME, status (the installs, remote daemons, the spool), spool list|retry|drop [--entry NAME | --all]`,
  )
  .option("--harness <name>", "The harness the agent's sessions run as")
  .option("--project <dir>", "Write the project's settings under DIR (default: the current directory)")
  .option("--user", "Write the operator's own settings (~/.claude/settings.json, ~/.codex/hooks.json)")
  .option(
    "--mode <mode>",
    `install: command (a hook process per call; spools) or http (${AGENTS.agents
      .filter((a) => a.install.modes.includes("http"))
      .map((a) => a.title)
      .join(", ")} only)`,
  )
  .option(
    "--fail <mode>",
    "install: closed (a tool call the rules cannot judge, the daemon down or hung, is denied) or open (it runs); default: [agents] on_unreachable",
  )
  .option("--dry-run", "Say what would change; mint, revoke and write nothing")
  .option(
    "--enrol-file <file>",
    "install: the harness's tokens from the one-time enrolment code in FILE (harness token create --enrol), not from the control token",
  )
  .option(
    "--daemon <url>",
    "install: hooks that post to a remote daemon's hook endpoint, https://HOST:PORT (its [agents] listen under TLS), with --ca-file and, under mutual TLS, --client-cert/--client-key; tokens are minted or enrolled through --rpc",
  )
  .option(
    "--rpc <url>",
    "install: the daemon's RPC listener, https://HOST:PORT ([server] listen), where tokens are minted or an enrolment code is spent (same TLS files); default [client] daemon, else the local socket",
  )
  .option("--socket <path>", "The daemon's socket")
  .option("--config <path>", "The global config")
  .option("--entry <name>", "spool retry|drop: the spooled call, as spool list names it")
  .option("--all", "spool retry|drop: every call set aside or refused")
  .option("--json", "Print the result as JSON")
  .action(async (verb: string, agent: string | undefined, o: ClientOptions & AgentsCliOptions) => {
    if (verb === "status") {
      const { runAgentsStatus } = await import("./commands/agents-status.js");
      process.exitCode = await runAgentsStatus({ json: o.json }, io);
      return;
    }
    if (verb === "spool") {
      const { runAgentsSpool } = await import("./commands/agents-spool.js");
      process.exitCode = runAgentsSpool(
        agent,
        { json: o.json, entry: o.entry === undefined ? undefined : String(o.entry), all: o.all },
        io,
      );
      return;
    }
    if (verb !== "install" && verb !== "uninstall") {
      unknownVerb("agents", verb, "install, uninstall, status, spool");
      return;
    }
    const { enrolmentIssuer, runAgents } = await import("./commands/agents.js");
    process.exitCode = await runAgents(
      verb,
      agent,
      {
        socket: o.socket,
        config: o.config,
        json: o.json,
        harness: o.harness === undefined ? undefined : String(o.harness),
        project: o.project === undefined ? undefined : String(o.project),
        user: o.user,
        mode: o.mode,
        fail: o.fail === undefined ? undefined : String(o.fail),
        dryRun: o.dryRun,
        enrolFile: o.enrolFile === undefined ? undefined : String(o.enrolFile),
        daemon: o.daemon === undefined ? undefined : String(o.daemon),
        rpc: o.rpc === undefined ? undefined : String(o.rpc),
        caFile: o.caFile,
        clientCert: o.clientCert,
        clientKey: o.clientKey,
      },
      io,
      o.enrolFile === undefined ? undefined : enrolmentIssuer(String(o.enrolFile)),
    );
  });

cli.help();
cli.version(packageVersion());

/** Options whose value may be negative: cac would read `--limit -1` as the option `-1`. */
const NUMERIC_OPTIONS = new Set(["--limit", "--seconds"]);

/** `--limit -1` as `--limit=-1`, so the command reports the bad value rather than an unknown option. */
function joinNegativeValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const next = argv[i + 1];
    if (NUMERIC_OPTIONS.has(a) && next !== undefined && /^-\d/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

try {
  cli.parse(joinNegativeValues(process.argv), { run: false });
  if (cli.matchedCommand !== undefined) {
    await cli.runMatchedCommand();
  } else if (!cli.options.help && !cli.options.version) {
    if (cli.args.length > 0) {
      process.stderr.write(`harness: unknown command '${cli.args[0]}'\n`);
      process.exitCode = 2;
    }
    cli.outputHelp();
  }
} catch (e) {
  // cac reports missing arguments and unknown options by throwing.
  process.stderr.write(`harness: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 2;
}
