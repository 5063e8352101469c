/**
 * `harness tui [--socket PATH | --daemon URL] [--config PATH]`: the operator's console (SPEC-0029 REQ-19, docs/cli.md):
 * the feed of fires and loop stops, shadowing rules, holds, proposals, annotations and rules, read through
 * RuleService (and JournalQueryService for the loop stops), read tier. With the operator's control token readable it may clear a hold (ClearHold); without, it runs
 * read-only and says why when `c` is pressed. The renderers are the CLI's own, so an explanation reads
 * as `harness rules explain` prints it, and every producer-supplied string is escaped the same way.
 */
import { journalQueryClient, ruleClient } from "../../rpc/client.js";
import { runConsole } from "../../tui/console.js";
import type { HoldClearing } from "../../tui/console-data.js";
import { type Common, EXIT, type Io } from "../io.js";
import { explanationLines } from "../render/fires.js";
import { holdState } from "../render/holds.js";
import { printable } from "../render/printable.js";
import { modeOf } from "../render/rules.js";
import { clientTarget, controlToken, readToken } from "../target.js";

export async function runTui(
  options: Common,
  io: Io,
  stdin: NodeJS.ReadStream = process.stdin,
  stdout: NodeJS.WriteStream = process.stdout,
): Promise<number> {
  if (!stdin.isTTY || !stdout.isTTY) {
    io.err(
      "harness tui: needs a terminal (stdin and stdout a TTY); `harness rules watch` streams events as lines",
    );
    return EXIT.usage;
  }
  const target = await clientTarget({ ...options, env: io.env });
  const control = await controlToken(target, "tui");
  const read = await readToken(target, "tui");
  if ("error" in read) {
    io.err(read.error);
    return EXIT.error;
  }
  const reads = ruleClient(target.rpc, read.token);
  const clearing: HoldClearing =
    "error" in control
      ? { readOnly: control.error.replace(/^harness tui: /, "") }
      : {
          clear: async (harness, rule) => {
            const res = await ruleClient(target.rpc, control.token).clearHold({
              harness,
              rule,
            });
            return res.released.map(
              (h) => `released ${h.harness}: hold by rule ${h.rule} (fire ${h.fireId})`,
            );
          },
        };
  await runConsole({
    reads,
    journal: journalQueryClient(target.rpc, read.token),
    daemon: target.where,
    clearing,
    text: { printable, explanation: explanationLines, ruleMode: modeOf, holdState },
    color: io.env.NO_COLOR === undefined || io.env.NO_COLOR === "",
    stdin,
    stdout,
  });
  return EXIT.ok;
}
