/**
 * `harness token` (issue 16): the credentials the daemon issues, through the real CLI against a real
 * daemon. A token minted is in force at once and one revoked is refused at once, with no reload; a
 * producer token appends only its source's rows (and only its harness's, when bound to one); a read
 * token's open stream ends when it is revoked; a gateway token opens no RPC; the text of a token is
 * never stored or listed.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { controlTokenPath } from "../../../src/shell/config/paths.js";
import { ruleClient } from "../../../src/shell/rpc/client.js";
import { journalRows, revokedTokenRuns } from "../../support/store-reads.js";
import { jsonl, TestFleet } from "../daemon-harness.js";

const fleets: TestFleet[] = [];
afterEach(async () => {
  for (const f of fleets.splice(0)) await f.dispose();
});

async function started(): Promise<TestFleet> {
  const f = new TestFleet();
  fleets.push(f);
  await f.start();
  return f;
}

const closed = (harness: string, run = `${harness}#1`) => ({
  kind: "run_event",
  type: "closed",
  harness,
  run,
  outcome: "success",
});
const tool = (harness: string) => ({
  kind: "run_event",
  type: "tool",
  harness,
  run: `${harness}#1`,
  tool: "Read",
  action: "read",
});

const append = (f: TestFleet, tokenFile: string, events: readonly Record<string, unknown>[]) =>
  f.cli(["journal", "append", "--token-file", tokenFile], jsonl(events));

const rows = (f: TestFleet, harness: string) =>
  journalRows(f, { harness }).map((r) => ({ source: r.source, type: r.type }));

async function create(f: TestFleet, args: readonly string[]): Promise<{ id: string; file: string }> {
  const file = path.join(f.root, `t-${Math.random().toString(36).slice(2)}.token`);
  const r = await f.cli(["token", "create", ...args, "--out", file, "--json"]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return { id: JSON.parse(r.stdout).id, file };
}

describe("harness token", () => {
  it("a producer token is in force at once and refused at once when revoked", async () => {
    const f = await started();
    const { id, file } = await create(f, ["--producer", "ledger", "--label", "ci ledger"]);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect((await append(f, file, [closed("first")])).code).toBe(0);
    expect(rows(f, "first")).toEqual([{ source: "ledger", type: "closed" }]);

    const revoked = await f.cli(["token", "revoke", id]);
    expect(revoked.stdout).toBe(`revoked ${id}\n`);
    const refused = await append(f, file, [closed("after")]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/unknown bearer token/);
    expect(rows(f, "after")).toEqual([]);

    // Revoking it again revokes nothing, and says so.
    const again = await f.cli(["token", "revoke", id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no such token in force/);
  });

  it("a producer token appends only its source's rows", async () => {
    const f = await started();
    const { file } = await create(f, ["--producer", "ledger"]);
    const r = await append(f, file, [tool("mixed"), closed("mixed")]);
    expect(r.stdout + r.stderr).toMatch(/source ledger may not write run_event rows of type "tool"/);
    expect(rows(f, "mixed")).toEqual([{ source: "ledger", type: "closed" }]);
  });

  it("a producer token bound to a harness appends only that harness's rows", async () => {
    const f = await started();
    const { file } = await create(f, ["--producer", "observer", "--harness", "alpha"]);
    const r = await append(f, file, [tool("alpha"), tool("beta")]);
    expect(r.stdout + r.stderr).toMatch(/appends only harness "alpha"'s rows \(got harness "beta"\)/);
    expect(rows(f, "alpha")).toEqual([{ source: "observer", type: "tool" }]);
    expect(rows(f, "beta")).toEqual([]);
  });

  it("a revoked read token's open WatchEvents stream ends; the socket's own stays open", async () => {
    const f = await started();
    const { id, file } = await create(f, ["--read"]);
    const token = fs.readFileSync(file, "utf8").trim();
    const reader = ruleClient({ socketPath: f.socketPath }, token).watchEvents({})[Symbol.asyncIterator]();
    const socketReader = ruleClient({ socketPath: f.socketPath }).watchEvents({})[Symbol.asyncIterator]();
    await reader.next();
    await socketReader.next();
    expect((await f.cli(["token", "revoke", id])).code).toBe(0);
    const ended = await reader.next().catch((e: Error) => e);
    expect(ended).toBeInstanceOf(Error);
    expect((ended as Error).message).toMatch(/revoked/);
    const still = await Promise.race([
      socketReader.next().then(() => "ended"),
      new Promise((r) => setTimeout(() => r("open"), 300)),
    ]);
    expect(still).toBe("open");
    await socketReader.return?.();
  });

  it("a gateway token opens no RPC, and is revoked when its run's closed row is admitted", async () => {
    const f = await started();
    const made = await f.cli(["token", "create", "--gateway", "--harness", "miner", "--run", "miner#7"]);
    expect(made.code).toBe(0);
    const token = made.stdout.trim();
    expect(token).toMatch(/^hrt_[A-Za-z0-9_-]{43}$/);
    const denied = await ruleClient({ socketPath: f.socketPath }, token)
      .listRules({})
      .catch((e: Error) => e);
    expect((denied as Error).message).toMatch(/gateway token \(it is for the MCP gateway only\)/);

    const listed = async () => JSON.parse((await f.cli(["token", "list", "--all", "--json"])).stdout).tokens;
    expect(await listed()).toMatchObject([
      { kind: "gateway", harness: "miner", run: "miner#7", revoked: null },
    ]);
    const ledger = f.tokens.get("ledger") as string;
    expect((await append(f, ledger, [closed("miner", "miner#6")])).code).toBe(0);
    expect((await append(f, ledger, [closed("miner", "miner#7")])).code).toBe(0);
    // Revoked when the closed row commits (derive/closed-run-tokens.ts): once the daemon has passed it.
    await f.until(() => revokedTokenRuns(f).includes("miner#7"), "the run's token revoked");
    // The other run's closed row, committed first, revoked nothing of this run's.
    expect(revokedTokenRuns(f)).toEqual(["miner#7"]);
    expect((await listed())[0].revoked).not.toBeNull();
  });

  it("no token's text is stored or listed, and tokens outlive a restart", async () => {
    const f = await started();
    const { id, file } = await create(f, ["--producer", "facts"]);
    const token = fs.readFileSync(file, "utf8").trim();
    const list = await f.cli(["token", "list"]);
    expect(list.stdout).toMatch(new RegExp(`^${id}\\s+producer\\s+facts\\s`, "m"));
    expect(list.stdout).not.toContain(token);
    await f.stop();
    expect(fs.readFileSync(f.storePath).includes(Buffer.from(token))).toBe(false);
    await f.start();
    const fact = { kind: "fact_event", type: "recorded", fact: "f1", status: "live", harness: "facts" };
    expect((await append(f, file, [fact])).code).toBe(0);
    expect(rows(f, "facts")).toEqual([{ source: "facts", type: "recorded" }]);
  });

  it("an expiring read token's open WatchEvents stream ends when its lifetime runs out", async () => {
    const f = await started();
    const { file } = await create(f, ["--read", "--ttl", "3s"]);
    const token = fs.readFileSync(file, "utf8").trim();
    const reader = ruleClient({ socketPath: f.socketPath }, token).watchEvents({})[Symbol.asyncIterator]();
    await reader.next();
    const ended = await Promise.race([
      reader.next().catch((e: Error) => e),
      new Promise((r) => setTimeout(() => r("still open"), 10_000)),
    ]);
    expect(ended).toBeInstanceOf(Error);
    expect((ended as Error).message).toMatch(/no longer in force \(revoked, expired/);
  });

  it("an expired token is refused", async () => {
    const f = await started();
    const { file } = await create(f, ["--producer", "observer", "--ttl", "1s"]);
    const listed = JSON.parse((await f.cli(["token", "list", "--all", "--json"])).stdout).tokens;
    expect(listed[0].expires).toMatch(/^\d{4}-/);
    await new Promise((r) => setTimeout(r, 1100));
    const late = await append(f, file, [tool("late")]);
    expect(late.stderr).toMatch(/unknown bearer token/);
    expect(rows(f, "late")).toEqual([]);
  });

  it("refuses a request that says too little or too much, minting nothing", async () => {
    const f = await started();
    const cases: readonly (readonly string[])[] = [
      ["--producer", "observer"],
      ["--producer", "nobody", "--out", "x"],
      ["--read", "--gateway"],
      ["--gateway"],
      ["--read", "--harness", "a", "--out", "x"],
      ["--producer", "observer", "--run", "r", "--out", "x"],
      ["--gateway", "--harness", "a", "--ttl", "soon"],
    ];
    for (const args of cases) {
      const r = await f.cli(["token", "create", ...args]);
      expect(r.code, args.join(" ")).toBe(2);
    }
    const daemonRefused = await f.cli(["token", "create", "--gateway", "--harness", "bad\u001b[2J"]);
    expect(daemonRefused.code).toBe(2);
    expect(daemonRefused.stderr).toMatch(/harness holds a control character \(U\+001B\)/);
    expect(JSON.parse((await f.cli(["token", "list", "--all", "--json"])).stdout).tokens).toEqual([]);
  });

  it("an --out file that exists is kept, and the token minted for it revoked", async () => {
    const f = await started();
    const file = path.join(f.root, "taken.token");
    fs.writeFileSync(file, "someone else's\n", { mode: 0o600 });
    const r = await f.cli(["token", "create", "--producer", "graph", "--out", file]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/was revoked; --force replaces the file/);
    expect(fs.readFileSync(file, "utf8")).toBe("someone else's\n");
    expect(JSON.parse((await f.cli(["token", "list", "--json"])).stdout).tokens).toEqual([]);
    const forced = await f.cli(["token", "create", "--producer", "graph", "--out", file, "--force"]);
    expect(forced.code).toBe(0);
    expect(fs.readFileSync(file, "utf8")).toMatch(/^hrt_/);
  });

  it("rotate-control writes a new control token and refuses the old one at once, without a reload", async () => {
    const f = await started();
    const file = controlTokenPath(f.env);
    const old = fs.readFileSync(file, "utf8").trim();
    const r = await f.cli(["token", "rotate-control", "--json"]);
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual({ file });
    const fresh = fs.readFileSync(file, "utf8").trim();
    expect(fresh).not.toBe(old);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const denied = await ruleClient({ socketPath: f.socketPath }, old)
      .clearHold({ harness: "nobody" })
      .catch((e: Error) => e);
    expect((denied as Error).message).toMatch(/unknown bearer token/);
    // The CLI reads the new token from the file; a reload rereads the same file and keeps it.
    expect((await f.cli(["reload"])).code).toBe(0);
    expect((await f.cli(["token", "list"])).code).toBe(0);
  });
});
