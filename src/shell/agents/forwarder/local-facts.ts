/**
 * The git facts of a hook call, computed on the agent's machine for a remote daemon (decision 0017):
 * the daemon's own code (`../ingest/git-facts.ts`, `../ingest/repo-paths.ts`) with its bounds, run once
 * in the hook's process. The payload's `cwd` and the tool's paths are found by the agent's own mapping
 * (its hook format's `map`), as the daemon would find them. Git runs in local mode (no user config, no
 * transport), one process at a time, and the call waits for it at most `waitMs`: past that it goes
 * without facts, as the daemon's calls do.
 */

import { GitFactsReader } from "../ingest/git-facts.js";
import type { Payload } from "../ingest/hook-event.js";
import type { HookFormat } from "../ingest/hook-format.js";
import { repoPaths } from "../ingest/repo-paths.js";
import type { SuppliedFacts } from "../ingest/supplied-facts.js";

export async function localFacts(
  format: HookFormat,
  payload: Payload,
  env: NodeJS.ProcessEnv,
  waitMs: number,
): Promise<SuppliedFacts> {
  // The verify patterns are the daemon's; they decide a mark's kind, never a path.
  const mapped = format.map(payload, []);
  if (!mapped.ok || mapped.hook.cwd === undefined || mapped.hook.row === undefined) return {};
  const { cwd, row } = mapped.hook;
  const reader = new GitFactsReader(env, { limits: { children: 1, queued: 0, waitMs, cached: 1 } });
  const facts = await reader.facts(cwd);
  const named = row.type === "tool" || row.type === "attempt" ? row.paths : undefined;
  return {
    ...(facts.repo === undefined ? {} : { repo: facts.repo }),
    ...(facts.branch === undefined ? {} : { branch: facts.branch }),
    ...(named === undefined
      ? {}
      : { paths: facts.realTop === undefined ? [] : repoPaths(named, cwd, facts.realTop) }),
  };
}
