/**
 * `harness agents spool list|retry|drop [--entry NAME | --all] [--json]` (docs/cli.md): the command
 * hook's spool on this machine (`agents/forwarder/spool.ts`), read and changed without the daemon.
 * `list` shows every call waiting, set aside (its delivery failed `MAX_TRIES` times) or refused by the
 * daemon; `retry` puts set-aside or refused calls back in line (the next hook call delivers them, in
 * order, with their own idempotency key, so a call the daemon did store is not stored twice); `drop`
 * deletes them. Exit 0 done, 1 no such entry, 2 usage.
 */
import { rfc3339Seconds } from "../../../core/instants.js";
import { AGENTS } from "../../agents/adapters/registry.js";
import { Spool, type SpoolEntry, type SpoolPlace } from "../../agents/forwarder/spool.js";
import { agentsStateDir } from "../../agents/install/agent-paths.js";
import { type Common, EXIT, type Io, table } from "../io.js";

export interface SpoolOptions extends Common {
  readonly entry?: string | undefined;
  readonly all?: boolean | undefined;
}

const PLACES: readonly SpoolPlace[] = ["waiting", "set-aside", "failed"];

/** The fields of a spooled payload worth showing: producer text, made printable by `table`. */
function described(entry: SpoolEntry | undefined): { event: string; session: string } {
  const p = (typeof entry?.payload === "object" && entry.payload !== null ? entry.payload : {}) as Record<
    string,
    unknown
  >;
  const text = (v: unknown) => (typeof v === "string" ? v.slice(0, 80) : "");
  // Where its format names them; an entry of a format this build does not know shows neither.
  const ids = entry === undefined ? undefined : AGENTS.hook(entry.adapter)?.ids;
  return {
    event: ids === undefined ? "" : text(p[ids.event]),
    session: ids === undefined ? "" : text(p[ids.session]),
  };
}

function list(spool: Spool, o: SpoolOptions, io: Io): number {
  const rows = PLACES.flatMap((place) =>
    spool.entries(place).map((name) => {
      const entry = spool.read(name, place);
      return {
        name,
        place,
        tries: entry?.tries ?? 0,
        harness: entry?.harness ?? "",
        adapter: entry?.adapter ?? "",
        ...described(entry),
        made_at: typeof entry?.at === "number" ? rfc3339Seconds(entry.at) : "",
      };
    }),
  );
  if (o.json === true) {
    io.out(JSON.stringify({ dir: spool.dir, entries: rows }));
    return EXIT.ok;
  }
  if (rows.length === 0) {
    io.out(`the spool ${spool.dir} is empty`);
    return EXIT.ok;
  }
  for (const line of table(
    ["ENTRY", "STATE", "TRIES", "HARNESS", "ADAPTER", "EVENT", "SESSION", "MADE"],
    rows.map((r) => [r.name, r.place, String(r.tries), r.harness, r.adapter, r.event, r.session, r.made_at]),
  ))
    io.out(line);
  return EXIT.ok;
}

/** `retry` and `drop`: the named entry, or with `--all` every set-aside and refused one. */
function change(spool: Spool, verb: "retry" | "drop", o: SpoolOptions, io: Io): number {
  if ((o.entry === undefined) === (o.all !== true)) {
    io.err(`harness agents spool ${verb}: give --entry NAME (from harness agents spool list) or --all`);
    return EXIT.usage;
  }
  const kept: readonly Exclude<SpoolPlace, "waiting">[] = ["set-aside", "failed"];
  const targets =
    o.entry === undefined
      ? kept.flatMap((place) => spool.entries(place).map((name) => ({ name, place })))
      : (verb === "drop" ? PLACES : kept)
          .filter((place) => spool.entries(place).includes(o.entry as string))
          .map((place) => ({ name: o.entry as string, place }));
  if (o.entry !== undefined && targets.length === 0) {
    io.err(
      `harness agents spool ${verb}: no ${verb === "drop" ? "" : "set-aside or refused "}entry ${JSON.stringify(o.entry)} in ${spool.dir}`,
    );
    return EXIT.failed;
  }
  let done = 0;
  for (const t of targets)
    if (
      verb === "drop"
        ? spool.drop(t.name, t.place)
        : spool.retry(t.name, t.place as Exclude<SpoolPlace, "waiting">)
    )
      done++;
  const n = `${done} ${done === 1 ? "call" : "calls"}`;
  if (o.json === true) io.out(JSON.stringify({ [verb === "drop" ? "dropped" : "requeued"]: done }));
  else
    io.out(
      verb === "drop"
        ? `${n} dropped from ${spool.dir}`
        : `${n} back in the spool: the next hook call that reaches the daemon delivers them, in order`,
    );
  return EXIT.ok;
}

export function runAgentsSpool(action: string | undefined, o: SpoolOptions, io: Io): number {
  const spool = new Spool(`${agentsStateDir(io.env)}/spool`);
  if (action === "list") return list(spool, o, io);
  if (action === "retry" || action === "drop") return change(spool, action, o, io);
  io.err("harness agents spool: give list, retry or drop");
  return EXIT.usage;
}
