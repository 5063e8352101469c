/**
 * `harness daemon [--store PATH] [--config PATH] [--socket PATH] [--json]`: runs until SIGTERM or SIGINT.
 * Its start line says where it listens: on stderr, or with `--json` as one JSON object on stdout among
 * the log's JSON lines (`"event": "daemon_started"`), for a supervisor that reads where to connect.
 */
import * as path from "node:path";
import { DaemonApp } from "../../app/daemon-app.js";
import { shellWord } from "../../support/shell-word.js";
import type { Io } from "../io.js";

export async function runDaemon(
  options: {
    readonly store?: string | undefined;
    readonly config?: string | undefined;
    readonly socket?: string | undefined;
    readonly json?: boolean | undefined;
  },
  io: Io,
): Promise<number> {
  // Listening from the first moment: a SIGTERM during start (opening the store, loading policy clones)
  // would otherwise kill the process before it could close the store cleanly.
  let stopRequested!: () => void;
  const stopping = new Promise<void>((resolve) => {
    stopRequested = resolve;
  });
  const onSignal = () => stopRequested();
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  let daemon: DaemonApp;
  try {
    daemon = await DaemonApp.start({
      env: io.env,
      ...(options.store === undefined ? {} : { storePath: options.store }),
      ...(options.config === undefined ? {} : { configPath: options.config }),
      ...(options.socket === undefined ? {} : { socketPath: options.socket }),
      ...(io.env.HARNESS_TICK_MS === undefined ? {} : { tickMs: Number(io.env.HARNESS_TICK_MS) }),
    });
  } catch (e) {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
    io.err(`harness daemon: ${(e as Error).message}`);
    return 1;
  }
  if (
    Object.values(daemon.config.server.producers).every((f) => f === undefined) &&
    !daemon.tokens.credentials.some((t) => t.kind === "producer")
  )
    io.err(`harness daemon: ${noProducerHint(daemon.configPath)}`);
  if (options.json === true)
    io.out(
      JSON.stringify({
        event: "daemon_started",
        store: daemon.storeLabel,
        socket: daemon.socketPath,
        metrics: daemon.metricsUrl ?? null,
        hooks: daemon.hooksUrl ?? null,
        rpc: daemon.rpcUrl ?? null,
        tls_sha256: daemon.tlsSha256 ?? null,
      }),
    );
  else
    io.err(
      // The hooks URL stays last: supervisors and tests read it to the end of the line.
      `harness daemon: store ${daemon.storeLabel}, socket ${daemon.socketPath}, rpc ${daemon.rpcUrl ?? "off"}${daemon.tlsSha256 === undefined ? "" : `, tls sha256 ${daemon.tlsSha256}`}, metrics ${daemon.metricsUrl ?? "off"}, hooks ${daemon.hooksUrl ?? "off"}`,
    );
  await stopping;
  process.off("SIGTERM", onSignal);
  process.off("SIGINT", onSignal);
  try {
    await daemon.close();
    return 0;
  } catch (e) {
    io.err(`harness daemon: shutdown: ${(e as Error).message}`);
    return 1;
  }
}

/** With no producer credential nothing can append: how to make one, as a command to paste. */
function noProducerHint(configPath: string): string {
  const file = path.join(path.dirname(configPath), "ledger.token");
  return (
    "no producer credential is configured in [server.producers] or issued, so nothing can append to the journal. " +
    `For the ledger source (likewise observer, loopguard, graph, facts), make one: harness token create --producer ledger --out ${shellWord(file)} ` +
    "(in force at once; the producer appends with --token-file that file)"
  );
}
