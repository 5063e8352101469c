/**
 * The reload matrix (issue 16) for the keys issue 17 added: `[graph] project_file_edges` and `[agents]
 * stale_after` are read from the config in force at each row, so a reload applies them to the next row;
 * `[agents] listen` is a listening address and is named as needing a restart.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, expect, it } from "vitest";
import { AgentsDaemon, session } from "./agents-daemon.js";

const daemons: AgentsDaemon[] = [];
afterEach(async () => {
  for (const d of daemons.splice(0)) await d.dispose();
});

const configFile = (d: AgentsDaemon) => path.join(d.fleet.root, "config", "harness", "harness.toml");
const appendConfig = (d: AgentsDaemon, lines: string) =>
  fs.writeFileSync(configFile(d), `${fs.readFileSync(configFile(d), "utf8")}\n${lines}\n`);

it("a [graph] project_file_edges turned off by a reload derives no edge from the next rows", async () => {
  const d = await AgentsDaemon.start();
  daemons.push(d);
  const impl = session("impl", "s1");
  const review = session("review", "s2");
  await d.hookRows("ledger", [impl.opened(), review.opened()]);
  await d.hookRows("observer", [impl.edit("a.go")]);
  await d.settled();
  expect(d.rows("edge_added", "graph_event")).toHaveLength(1);

  appendConfig(d, "[graph]\nproject_file_edges = false");
  await d.app.reload();
  await d.hookRows("observer", [review.edit("a.go"), impl.edit("b.go")]);
  await d.settled();
  expect(d.rows("edge_added", "graph_event")).toHaveLength(1);
  expect(d.rows("collision_started", "graph_event")).toEqual([]);
});

it("an [agents] listen changed by a reload is named as needing a restart", async () => {
  const d = await AgentsDaemon.start({ config: '[agents]\nlisten = "127.0.0.1:0"' });
  daemons.push(d);
  fs.writeFileSync(
    configFile(d),
    fs.readFileSync(configFile(d), "utf8").replace(/^listen = "127\.0\.0\.1:0"$/m, 'listen = ""'),
  );
  const r = await d.app.reload();
  expect(r.needsRestart).toEqual(["agents.listen"]);
});
