#!/usr/bin/env node
/**
 * The reference supervisor's stop command, as `[supervisor] stop` runs it (see `reference-supervisor.ts`
 * for the contract):
 *
 *   node dist/shell/supervisor/supervisor-main.js stop --socket <supervisor socket> <harness> <run> <rule> <fire-id> <seq>
 *
 * The daemon appends the last five arguments. Exit 0 once the supervisor handled the request (stopped
 * the run, or found it no longer in flight and did nothing), 1 when it refused the request, 2 on a usage
 * error, 3 when no supervisor answers on the socket.
 */
import { parseStopRequest, requestStop, StopRequestError } from "./stop-socket.js";

const EXIT = { ok: 0, failed: 1, usage: 2, unreachable: 3 } as const;
const USAGE = "usage: supervisor-main.js stop --socket <path> <harness> <run> <rule> <fire-id> <seq>";

async function main(argv: readonly string[]): Promise<number> {
  const [verb, flag, socketPath, harness, run, rule, fireId, seqText, ...extra] = argv;
  if (verb !== "stop" || flag !== "--socket" || socketPath === undefined || seqText === undefined) {
    process.stderr.write(`${USAGE}\n`);
    return EXIT.usage;
  }
  if (extra.length > 0) {
    process.stderr.write(
      `supervisor stop: unexpected arguments after the seq: ${extra.join(" ")}\n${USAGE}\n`,
    );
    return EXIT.usage;
  }
  const seq = /^\d+$/.test(seqText) ? Number(seqText) : Number.NaN;
  const req = parseStopRequest({ harness, run, rule, fire_id: fireId, seq });
  if (typeof req === "string") {
    process.stderr.write(`supervisor stop: ${req}\n${USAGE}\n`);
    return EXIT.usage;
  }
  try {
    const reply = await requestStop(socketPath, req);
    switch (reply.result) {
      case "stopped":
        process.stdout.write(
          `stopped ${reply.run} (rule ${req.rule}, fire ${req.fire_id}, seq ${req.seq}): closed cancelled, reason rule_stop\n`,
        );
        return EXIT.ok;
      case "not_in_flight":
        process.stdout.write(
          `${reply.run} is not in flight (${reply.in_flight === "" ? "nothing is" : `${reply.in_flight} is`}): nothing stopped\n`,
        );
        return EXIT.ok;
      case "error":
        process.stderr.write(`supervisor stop: refused: ${reply.detail}\n`);
        return EXIT.failed;
    }
  } catch (e) {
    process.stderr.write(`supervisor stop: ${(e as Error).message}\n`);
    return e instanceof StopRequestError && e.unreachable ? EXIT.unreachable : EXIT.failed;
  }
}

process.exitCode = await main(process.argv.slice(2));
