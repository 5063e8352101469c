/**
 * `harness rules backtest` with no daemon answering (SPEC-0029 REQ-8: "the CLI SHOULD run the same
 * replay over a read-only connection to the store"): the same `replay` the daemon's worker runs, with
 * the rule set the daemon would load from the same config and the shadow records the store holds.
 */
import type { BacktestCounts } from "../../core/backtest.js";
import type { BacktestOptions, BacktestReport } from "../cli/commands/rules-backtest.js";
import { EXIT, type Io } from "../cli/io.js";
import { formatConfigError } from "../config/config-error.js";
import { readGlobalConfig } from "../config/global-config.js";
import { storePath as defaultStorePath, globalConfigPath } from "../config/paths.js";
import { loadRuleSet } from "../policy/rule-source.js";
import { readShadows } from "../store/decision-store.js";
import { openStoreReadOnly } from "../store/open-store.js";
import { backtestRequest, sinceRefusal } from "./backtest-request.js";
import { BacktestRuleError, type BacktestStart, type ReplayedFire, replay } from "./replay.js";

/** The same replay with no daemon: the store read-only, the rule set the config would load. */
export async function replayOnStore(
  file: string,
  text: string,
  sinceMs: number,
  options: BacktestOptions,
  io: Io,
): Promise<BacktestReport | number> {
  const configFile = options.config ?? globalConfigPath(io.env);
  const read = await readGlobalConfig(configFile, io.env, { required: options.config !== undefined });
  if (!read.ok) {
    io.err(`harness rules backtest: config ${configFile}:\n${read.errors.map(formatConfigError).join("\n")}`);
    return EXIT.failed;
  }
  const { config } = read;
  const refusal = sinceRefusal(sinceMs, config.memory.rules.journalRetention);
  if (refusal !== undefined) {
    io.err(`harness rules backtest: ${refusal}`);
    return EXIT.usage;
  }
  const storeFile = options.store ?? defaultStorePath(io.env);
  let store: ReturnType<typeof openStoreReadOnly>;
  try {
    store = openStoreReadOnly(storeFile);
  } catch (e) {
    io.err(
      `harness rules backtest: no daemon answers, and the store cannot be read: ${(e as Error).message}`,
    );
    return EXIT.unreachable;
  }
  io.err(`harness rules backtest: no daemon answers; replaying over ${store.path} (read-only)`);
  try {
    const request = backtestRequest({
      file,
      text,
      sinceMs,
      nowMs: Date.now(),
      ruleSet: loadRuleSet(config),
      shadows: readShadows(store.db),
    });
    let start: BacktestStart | undefined;
    const fires: ReplayedFire[] = [];
    let counts: BacktestCounts | undefined;
    replay(store.db, request, {
      start: (s) => {
        start = s;
      },
      fires: (fs) => {
        fires.push(...fs);
      },
      summary: (c) => {
        counts = c;
      },
    });
    if (start === undefined || counts === undefined) throw new Error("the replay ended without a summary");
    return { start, sinceMs, fires, counts, ranOn: "store" };
  } catch (e) {
    if (e instanceof BacktestRuleError) {
      io.err(`harness rules backtest: ${e.message}`);
      return EXIT.failed;
    }
    throw e;
  } finally {
    store.close();
  }
}
