/**
 * The RuleService responses recorded from real daemons (`test/fixtures/tui/record.ts`), replayed as the
 * TUI's `ConsoleReads`: each method answers what the daemon answered, the event stream opens with its
 * subscribed message and then yields what a test pushes, and every call is logged by method name.
 */
import * as fs from "node:fs";
import {
  type DescMessage,
  fromJson,
  type JsonValue,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import { explanationLines } from "../../../src/shell/cli/render/fires.js";
import { holdState } from "../../../src/shell/cli/render/holds.js";
import { printable } from "../../../src/shell/cli/render/printable.js";
import { modeOf } from "../../../src/shell/cli/render/rules.js";
import {
  CountFiresResponseSchema,
  ExplainFireResponseSchema,
  type FireInfo,
  GetStatusResponseSchema,
  ListAnnotatedNodesResponseSchema,
  ListAnnotationsResponseSchema,
  ListFiresResponseSchema,
  ListHoldsResponseSchema,
  ListProposalsResponseSchema,
  ListRulesResponseSchema,
  type WatchEventsResponse,
  type WatchEventsResponseSchema,
} from "../../../src/shell/rpc/gen/harness/v1/rules_pb.js";
import type { ConsoleReads } from "../../../src/shell/tui/console-data.js";
import type { TuiText } from "../../../src/shell/tui/text.js";

const raw = JSON.parse(
  fs.readFileSync(new URL("../../fixtures/tui/recorded.json", import.meta.url), "utf8"),
) as Record<string, JsonValue>;
const load = <D extends DescMessage>(schema: D, key: string): MessageShape<D> =>
  fromJson(schema, raw[key] as JsonValue);

export const RECORDED = {
  rules: load(ListRulesResponseSchema, "listRules"),
  counts: load(CountFiresResponseSchema, "countFires"),
  holds: load(ListHoldsResponseSchema, "listHolds"),
  status: load(GetStatusResponseSchema, "getStatus"),
  nodes: load(ListAnnotatedNodesResponseSchema, "listAnnotatedNodes"),
  annotations: load(ListAnnotationsResponseSchema, "listAnnotations"),
  fires: load(ListFiresResponseSchema, "listFires"),
  proposals: load(ListProposalsResponseSchema, "listProposals"),
  explain: (fireId: string) => {
    const x = (raw.explainFire as Record<string, JsonValue>)[fireId];
    if (x === undefined) throw new Error(`no recorded explanation of ${fireId}`);
    return fromJson(ExplainFireResponseSchema, x);
  },
};

/** The daemon's clock when the responses were recorded: the tests' `now`. */
export const RECORDED_NOW = Number(RECORDED.status.nowMs);

/** The renderers `harness tui` hands the console: the CLI's own. */
export const CLI_TEXT: TuiText = { printable, explanation: explanationLines, ruleMode: modeOf, holdState };

type Event = MessageInitShape<typeof WatchEventsResponseSchema>;

export class RecordedReads {
  readonly calls: string[] = [];
  /** Fires a forward ListFires (after_seq) returns beyond the recorded ones: what a gap hid. */
  missed: FireInfo[] = [];
  /** How many WatchEvents calls fail before one opens. */
  failures = 0;
  private push: ((e: Event) => void) | undefined;
  private readonly queue: Event[] = [];

  private ended = false;

  /** Ends the open stream, as a daemon that stops does. */
  end(): void {
    this.ended = true;
    this.push?.({});
  }

  /** Delivers one event on the open stream. */
  emit(e: Event): void {
    this.queue.push(e);
    this.push?.(e);
  }

  readonly reads: ConsoleReads = {
    watchEvents: (_req, options) => this.stream(options?.signal),
    listFires: async (req) => {
      this.calls.push("ListFires");
      if (req?.afterSeq === undefined) return RECORDED.fires;
      const after = req.afterSeq;
      const fires = [...RECORDED.fires.fires, ...this.missed]
        .filter((f) => f.seq > after)
        .sort((a, b) => Number(a.seq - b.seq));
      const last = fires[fires.length - 1];
      return { ...RECORDED.fires, fires, truncated: false, nextAfterSeq: last?.seq ?? after };
    },
    explainFire: async (req) => {
      this.calls.push("ExplainFire");
      return RECORDED.explain(req?.fireId ?? "");
    },
    listRules: async () => this.log("ListRules", RECORDED.rules),
    listHolds: async () => this.log("ListHolds", RECORDED.holds),
    listProposals: async () => this.log("ListProposals", RECORDED.proposals),
    listAnnotations: async () => this.log("ListAnnotations", RECORDED.annotations),
    listAnnotatedNodes: async () => this.log("ListAnnotatedNodes", RECORDED.nodes),
    countFires: async () => this.log("CountFires", RECORDED.counts),
    getStatus: async () => this.log("GetStatus", RECORDED.status),
  } as ConsoleReads;

  private log<T>(method: string, value: T): T {
    this.calls.push(method);
    return value;
  }

  private async *stream(signal: AbortSignal | undefined): AsyncGenerator<WatchEventsResponse> {
    this.calls.push("WatchEvents");
    if (this.failures > 0) {
      this.failures--;
      throw new Error("connect ECONNREFUSED (recorded daemon down)");
    }
    yield { event: { case: undefined } } as WatchEventsResponse;
    this.ended = false;
    for (;;) {
      if (this.ended) return;
      const next = this.queue.shift();
      if (next !== undefined) {
        yield next as WatchEventsResponse;
        continue;
      }
      if (signal?.aborted) return;
      await new Promise<void>((resolve) => {
        this.push = () => resolve();
        signal?.addEventListener("abort", () => resolve(), { once: true });
      });
      this.push = undefined;
    }
  }
}
