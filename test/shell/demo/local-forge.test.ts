/**
 * `harness demo`'s local forge, driven by the real forge client (`src/shell/forge/`) with Node's own
 * `fetch` over plain http to 127.0.0.1, and by the proposal clone's git over smart HTTP with the token
 * fed through the credential helper's pipe: the forge is detected as Gitea, refuses what Gitea refuses
 * (a second pull request for one head: 409; the author or an unknown user as a reviewer: 422; an unknown
 * label id: 422; a bad token: 401, for the API and for git), and keeps what it received in `pulls.json`.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalForge } from "../../../src/shell/demo/local-forge.js";
import { detectForge } from "../../../src/shell/forge/detect.js";
import { type Forge, ForgeError } from "../../../src/shell/forge/forge.js";
import { ProposalClone } from "../../../src/shell/forge/proposal-clone.js";
import { forgeRemote } from "../../../src/shell/forge/remote.js";

const failure = async (p: Promise<unknown>): Promise<ForgeError> => {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ForgeError);
  return e as ForgeError;
};

describe("harness demo's local forge", () => {
  let root: string;
  let forge: LocalForge;
  let token: string;
  let client: Forge;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "harness-local-forge-"));
    env = { PATH: process.env.PATH, HOME: root };
    forge = await LocalForge.start(path.join(root, "forge"));
    token = forge.addUser("harness-bot");
    forge.addUser("alice");
    await forge.createRepo("fleet", "policy", { "README.md": "policy\n" }, ["harness-rules"]);
    client = await detectForge(forgeRemote(forge.remoteOf("fleet", "policy")), token);
  });
  afterAll(async () => {
    await forge.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("is detected as Gitea over plain http to 127.0.0.1, with Node's own fetch", async () => {
    expect(client.kind).toBe("gitea");
    expect(client.api).toBe(`${forge.origin}/api/v1`);
    expect(await client.login()).toBe("harness-bot");
  });

  it("takes a push over smart HTTP only with a valid token, asked for through git's credential helper", async () => {
    const url = forgeRemote(forge.remoteOf("fleet", "policy")).httpsUrl;
    const bad = await ProposalClone.open(
      path.join(root, "bad-clone"),
      url,
      { username: "x", password: "y".repeat(40) },
      env,
    );
    await expect(bad.fetch("main", "harness-rules/")).rejects.toThrow(/Authentication failed|401/);
    const clone = await ProposalClone.open(
      path.join(root, "clone"),
      url,
      { username: "harness-bot", password: token },
      env,
    );
    const base = await clone.fetch("main", "harness-rules/");
    const commit = await clone.commit(base.tip, "a", 'name = "a"\n', "propose a");
    await clone.push(commit as string, "harness-rules/a");
    expect(await forge.show("fleet", "policy", "harness-rules/a", "rules/a.toml")).toBe('name = "a"\n');
  });

  it("opens one pull request per head; a second is 409, as Gitea answers", async () => {
    const pull = await client.openPull({ title: "t", head: "harness-rules/a", base: "main", body: "b" });
    expect(pull).toMatchObject({ number: 1, state: "open", merged: false, head: "harness-rules/a" });
    expect(pull.url).toBe(`${forge.origin}/fleet/policy/pulls/1`);
    const e = await failure(
      client.openPull({ title: "t", head: "harness-rules/a", base: "main", body: "b" }),
    );
    expect(e.status).toBe(409);
    expect(
      (await failure(client.openPull({ title: "t", head: "nope", base: "main", body: "" }))).status,
    ).toBe(422);
    expect(await client.findOpenPull("harness-rules/a")).toMatchObject({ number: 1 });
  });

  it("refuses the author or an unknown user as a reviewer with 422, and takes labels by id", async () => {
    expect((await failure(client.requestReviewers(1, ["harness-bot"]))).status).toBe(422);
    expect((await failure(client.requestReviewers(1, ["mallory"]))).status).toBe(422);
    await client.requestReviewers(1, ["alice"]);
    await client.addLabels(1, ["harness-rules"]);
    await client.updateBody(1, "edited");
    const kept = JSON.parse(fs.readFileSync(path.join(root, "forge", "pulls.json"), "utf8")) as unknown[];
    expect(kept).toEqual([
      expect.objectContaining({ number: 1, body: "edited", reviewers: ["alice"], labels: ["harness-rules"] }),
    ]);
    expect(await client.getPull(1)).toMatchObject({ state: "open", merged: false });
    expect(await client.lastReviewComment(1)).toBe("");
  });

  it("a bad token is 401, and nothing merges: the merge endpoint does not exist", async () => {
    const bad = await detectForge(forgeRemote(forge.remoteOf("fleet", "policy")), "y".repeat(40));
    const e = await failure(bad.login());
    expect(e.status).toBe(401);
    const merge = await fetch(`${forge.origin}/api/v1/repos/fleet/policy/pulls/1/merge`, {
      method: "POST",
      headers: { authorization: `token ${token}` },
    });
    expect(merge.status).toBe(404);
  });
});
