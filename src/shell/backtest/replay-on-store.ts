/**
 * `harness rules backtest` with no daemon answering (SPEC-0029 REQ-8: "the CLI SHOULD run the same
 * replay over a read-only connection to the store"): the same `replay` the daemon's worker runs, with
 * the rule set the daemon would load from the same config (the starter pack and the policy clones'
 * rules, `../policy/rule-source.ts`) and the shadow records the store holds. It writes nothing: the
 * policy clones' last good commits are read, never recorded.
 */
import type { BacktestCounts, ReplayedFire } from "../../core/backtest.js";
import { formatConfigError } from "../config/config-error.js";
import { readGlobalConfig } from "../config/global-config.js";
import { storePath as defaultStorePath, globalConfigPath } from "../config/paths.js";
import { RuleRefusedError } from "../errors.js";
import { servedRuleSets } from "../policy/rule-source.js";
import { openStoreReadOnly } from "../store/open-store.js";
import { Stores } from "../store/stores.js";
import { backtestRequest, sinceRefusal } from "./backtest-request.js";
import { type BacktestReport, type BacktestStart, replay } from "./replay.js";

export interface StoreReplayRequest {
  readonly file: string;
  readonly text: string;
  readonly sinceMs: number;
  /** `--diff`: the loaded rule of the same name replayed beside it. */
  readonly diff?: boolean;
  /** `--config`; by default the global config, where absence means defaults. */
  readonly config?: string | undefined;
  /** `--store`; by default the daemon's. */
  readonly store?: string | undefined;
  readonly env: NodeJS.ProcessEnv;
}

/** Why the replay could not run: the config, `--since`, the store, or the rule file itself. */
export type StoreReplayRefusal = "config" | "since" | "store" | "rule";

export type StoreReplay =
  | { readonly ok: true; readonly report: BacktestReport }
  | { readonly ok: false; readonly refusal: StoreReplayRefusal; readonly message: string };

/** The same replay with no daemon; `notice` hears where it runs before it starts. */
export async function replayOnStore(
  request: StoreReplayRequest,
  notice: (line: string) => void,
): Promise<StoreReplay> {
  const { env, sinceMs } = request;
  const configFile = request.config ?? globalConfigPath(env);
  const read = await readGlobalConfig(configFile, env, { required: request.config !== undefined });
  if (!read.ok)
    return {
      ok: false,
      refusal: "config",
      message: `config ${configFile}:\n${read.errors.map(formatConfigError).join("\n")}`,
    };
  const { config } = read;
  const refusal = sinceRefusal(sinceMs, config.memory.rules.journalRetention);
  if (refusal !== undefined) return { ok: false, refusal: "since", message: refusal };
  let store: ReturnType<typeof openStoreReadOnly>;
  try {
    store = openStoreReadOnly(request.store ?? defaultStorePath(env));
  } catch (e) {
    return {
      ok: false,
      refusal: "store",
      message: `no daemon answers, and the store cannot be read: ${(e as Error).message}`,
    };
  }
  notice(`no daemon answers; replaying over ${store.path} (read-only)`);
  try {
    const stores = new Stores(store);
    const lastGood = stores.lastGoodCommits;
    // Read-only: which commit a dirty clone serves is the daemon's to record.
    const rules = servedRuleSets(
      { get: async (repo) => lastGood.get(repo), record: async () => undefined },
      env,
      Date.now,
    );
    const { ruleSet } = await rules(config);
    const backtest = backtestRequest({
      file: request.file,
      text: request.text,
      sinceMs,
      nowMs: Date.now(),
      ruleSet,
      shadows: stores.shadows(),
      diff: request.diff === true,
    });
    let start: BacktestStart | undefined;
    const fires: ReplayedFire[] = [];
    const loadedFires: ReplayedFire[] = [];
    let counts: BacktestCounts | undefined;
    let loadedCounts: BacktestCounts | undefined;
    replay(stores.journal, backtest, {
      start: (s) => {
        start = s;
      },
      fires: (fs, loaded) => {
        (loaded ? loadedFires : fires).push(...fs);
      },
      summary: (c, loaded) => {
        counts = c;
        loadedCounts = loaded;
      },
    });
    if (start === undefined || counts === undefined) throw new Error("the replay ended without a summary");
    const loaded =
      start.loaded === undefined || loadedCounts === undefined
        ? {}
        : { loaded: { ...start.loaded, fires: loadedFires, counts: loadedCounts } };
    return { ok: true, report: { start, sinceMs, fires, counts, ranOn: "store", ...loaded } };
  } catch (e) {
    if (e instanceof RuleRefusedError) return { ok: false, refusal: "rule", message: e.message };
    throw e;
  } finally {
    store.close();
  }
}
