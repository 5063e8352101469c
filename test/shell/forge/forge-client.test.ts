/**
 * The forge clients (`src/shell/forge/`) against the test forge, in this process: detection from the
 * remote, and the refusals the real forges make reaching the caller as a `ForgeError` with the forge's
 * status and message (a second pull request for one head: 422 on GitHub, 409 on Gitea; the author as a
 * reviewer: 422; a bad token: 401). Node's `fetch` cannot be given a CA here, so the client is handed a
 * `fetch` over `node:https` that trusts the test forge's certificate; everything else is the client's.
 */
import * as fs from "node:fs";
import * as https from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectForge } from "../../../src/shell/forge/detect.js";
import { type Forge, ForgeError } from "../../../src/shell/forge/forge.js";
import { forgeRemote } from "../../../src/shell/forge/remote.js";
import { TestForge } from "./test-forge.js";
import { TestGitLab } from "./test-gitlab.js";

function trustingFetch(caFile: string): typeof fetch {
  const ca = fs.readFileSync(caFile);
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    return new Promise<Response>((resolve, reject) => {
      const req = https.request(
        url,
        { method: init?.method ?? "GET", headers: init?.headers as Record<string, string>, ca },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const headers = new Headers();
            for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") headers.set(k, v);
            const status = res.statusCode ?? 0;
            resolve(new Response(status === 204 ? null : Buffer.concat(chunks), { status, headers }));
          });
        },
      );
      req.on("error", reject);
      req.end(init?.body === undefined ? undefined : String(init.body));
    });
  }) as typeof fetch;
}

const failure = async (p: Promise<unknown>): Promise<ForgeError> => {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ForgeError);
  return e as ForgeError;
};

describe.each<"github" | "gitea">(["github", "gitea"])("the %s client against the test forge", (kind) => {
  let forge: TestForge;
  let client: Forge;
  let token: string;
  beforeAll(async () => {
    forge = await TestForge.start(kind);
    token = forge.addUser("harness-bot");
    forge.addUser("alice");
    forge.createRepo("org", "policy", {}, ["harness-rules"]);
    forge.branch("org", "policy", "harness-rules/a");
    client = await detectForge(forgeRemote(forge.remoteOf("org", "policy")), token, {
      fetch: trustingFetch(forge.caFile),
    });
  });
  afterAll(() => forge.dispose());

  it("is detected from the host's API: Gitea by /api/v1/version, GitHub Enterprise by /api/v3/meta", () => {
    expect(client.kind).toBe(kind);
    expect(client.api).toBe(`${forge.origin}/api/${kind === "github" ? "v3" : "v1"}`);
  });

  it("opens one pull request per head; the second is refused as the forge refuses it", async () => {
    expect(await client.login()).toBe("harness-bot");
    const pull = await client.openPull({ title: "t", head: "harness-rules/a", base: "main", body: "b" });
    expect(pull).toMatchObject({ number: 1, state: "open", merged: false, head: "harness-rules/a" });
    const e = await failure(
      client.openPull({ title: "t", head: "harness-rules/a", base: "main", body: "b" }),
    );
    if (kind === "github") {
      expect(e.status).toBe(422);
      expect(e.message).toContain("A pull request already exists for org:harness-rules/a.");
    } else expect(e.status).toBe(409);
    expect(await client.findOpenPull("harness-rules/a")).toMatchObject({ number: 1 });
    expect(await client.findOpenPull("harness-rules/none")).toBeUndefined();
  });

  it("refuses the author as a reviewer with 422, and requests another", async () => {
    const e = await failure(client.requestReviewers(1, ["harness-bot"]));
    expect(e.status).toBe(422);
    await client.requestReviewers(1, ["alice"]);
    await client.addLabels(1, ["harness-rules"]);
    expect(forge.pulls[0]).toMatchObject({ reviewers: ["alice"], labels: ["harness-rules"] });
  });

  it("Finding 2: reads back the requested reviewers (users and teams) and labels a pass ensures", async () => {
    await client.requestReviewers(1, ["org/rules-reviewers"]);
    const pull = await client.getPull(1);
    expect(pull.requested).toEqual(["alice", "team:rules-reviewers"]);
    expect(pull.labels).toEqual(["harness-rules"]);
    expect((await client.findOpenPull("harness-rules/a"))?.requested).toEqual([
      "alice",
      "team:rules-reviewers",
    ]);
    expect(await client.reviewedBy(1)).toEqual([]);
  });

  it("reads a merged pull request and the newest review or comment", async () => {
    forge.pulls[0]?.comments.push({ body: "first thought", at: "2026-01-01T00:00:00Z" });
    forge.close(1, { merged: true, review: "ship it" });
    expect(await client.getPull(1)).toMatchObject({ state: "closed", merged: true });
    expect(await client.lastReviewComment(1)).toBe("ship it");
  });

  it.runIf(kind === "github")(
    "Finding 6: GitHub refuses GET /user to an installation token with 403, as documented",
    async () => {
      const app = await detectForge(
        forgeRemote(forge.remoteOf("org", "policy")),
        forge.addInstallation("harness-app[bot]"),
        { fetch: trustingFetch(forge.caFile) },
      );
      const e = await failure(app.login());
      expect(e.status).toBe(403);
      expect(e.message).toBe("GET /user: HTTP 403: Resource not accessible by integration");
      expect(await app.getPull(1)).toMatchObject({ number: 1, merged: true });
    },
  );

  it("a bad token is 401, and no call goes further", async () => {
    const bad = await detectForge(forgeRemote(forge.remoteOf("org", "policy")), "y".repeat(40), {
      fetch: trustingFetch(forge.caFile),
    });
    const e = await failure(bad.login());
    expect(e.status).toBe(401);
    expect(e.message).toMatch(/^GET \/user: HTTP 401: /);
  });
});

describe("the gitlab client against the GitLab stand-in, a project in a nested group", () => {
  const GROUP = "org/platform";
  let forge: TestGitLab;
  let client: Forge;
  let token: string;
  beforeAll(async () => {
    forge = await TestGitLab.startGitLab();
    token = forge.addUser("harness-bot");
    forge.addUser("alice");
    forge.createRepo(GROUP, "policy", {});
    forge.branch(GROUP, "policy", "harness-rules/a");
    client = await detectForge(forgeRemote(forge.remoteOf(GROUP, "policy")), token, {
      fetch: trustingFetch(forge.caFile),
    });
  });
  afterAll(() => forge.dispose());

  it("is detected by /api/v4/version answering 401 without a token, and sends the token as Bearer", async () => {
    expect(client.kind).toBe("gitlab");
    expect(client.api).toBe(`${forge.origin}/api/v4`);
    expect(client.gitUser("harness-bot")).toBe("oauth2");
    expect(await client.login()).toBe("harness-bot");
    expect(forge.requests.find((q) => q.path === "/api/v4/version")?.headers.authorization).toBeUndefined();
    expect(forge.requests.at(-1)?.headers.authorization).toBe(`Bearer ${token}`);
  });

  it("opens one merge request per source branch at the encoded project path; the second is 409", async () => {
    const pull = await client.openPull({ title: "t", head: "harness-rules/a", base: "main", body: "b" });
    expect(pull).toMatchObject({
      number: 1,
      state: "open",
      merged: false,
      head: "harness-rules/a",
      body: "b",
      url: `${forge.origin}/${GROUP}/policy/-/merge_requests/1`,
    });
    expect(forge.requests.at(-1)?.path).toBe("/api/v4/projects/org%2Fplatform%2Fpolicy/merge_requests");
    expect(JSON.parse(forge.requests.at(-1)?.body ?? "{}")).toMatchObject({ remove_source_branch: true });
    const e = await failure(
      client.openPull({ title: "t", head: "harness-rules/a", base: "main", body: "b" }),
    );
    expect(e.status).toBe(409);
    expect(e.message).toContain("Another open merge request already exists for this source branch: !1");
    expect(await client.findOpenPull("harness-rules/a")).toMatchObject({ number: 1 });
    expect(await client.findOpenPull("harness-rules/none")).toBeUndefined();
  });

  it("refuses the author as a reviewer (GitLab itself would allow it), resolves usernames to ids and keeps reviewers already set", async () => {
    const e = await failure(client.requestReviewers(1, ["HARNESS-BOT"]));
    expect(e.message).toContain("HARNESS-BOT opened this merge request and cannot review it");
    expect((await failure(client.requestReviewers(1, ["nobody"]))).message).toContain(
      "GitLab has no user nobody",
    );
    expect((await failure(client.requestReviewers(1, ["org/team"]))).message).toContain("not groups");
    await client.requestReviewers(1, ["alice"]);
    await client.addLabels(1, ["harness-rules", "rules"]);
    await client.updateBody(1, "b2");
    const pull = await client.getPull(1);
    expect(pull).toMatchObject({ requested: ["alice"], labels: ["harness-rules", "rules"], body: "b2" });
    forge.addUser("bob");
    await client.requestReviewers(1, ["bob"]);
    expect((await client.getPull(1)).requested).toEqual(["alice", "bob"]);
    expect(await client.reviewedBy(1)).toEqual([]);
  });

  it("maps locked to open and merging, merged and closed to closed, and reads the newest note a person wrote", async () => {
    forge.lockedPulls.add(1);
    expect(await client.getPull(1)).toMatchObject({ state: "open", merged: false, merging: true });
    // Not listed by `state=opened`, found by `state=locked`: a pass must see it to leave it alone.
    expect(await client.findOpenPull("harness-rules/a")).toMatchObject({ number: 1, merging: true });
    forge.lockedPulls.clear();
    expect(await client.getPull(1)).toMatchObject({ state: "open", merging: false });
    forge.pulls[0]?.comments.push({ body: "first thought", at: "2026-01-01T00:00:00Z" });
    forge.close(1, { review: "not now" });
    expect(await client.getPull(1)).toMatchObject({ state: "closed", merged: false, merging: false });
    expect(await client.lastReviewComment(1)).toBe("not now");
    (forge.pulls[0] as { merged: boolean }).merged = true;
    expect(await client.getPull(1)).toMatchObject({ state: "closed", merged: true });
  });

  it("a bad token is 401 with GitLab's message", async () => {
    const bad = await detectForge(forgeRemote(forge.remoteOf(GROUP, "policy")), "y".repeat(40), {
      fetch: trustingFetch(forge.caFile),
    });
    const e = await failure(bad.login());
    expect(e.status).toBe(401);
    expect(e.message).toBe("GET /user: HTTP 401: 401 Unauthorized");
  });

  it("a nested path on GitHub or Gitea is refused: only GitLab has nested groups", async () => {
    const gitea = await TestForge.start("gitea");
    try {
      gitea.createRepo(GROUP, "policy", {});
      await expect(
        detectForge(forgeRemote(gitea.remoteOf(GROUP, "policy")), token, {
          fetch: trustingFetch(gitea.caFile),
        }),
      ).rejects.toThrow(/only GitLab has nested groups/);
    } finally {
      await gitea.dispose();
    }
  });
});

describe("which forge: by host, by the policy repo's declared forge, or by probing", () => {
  const offline = (async () => {
    throw new Error("no request may be made");
  }) as typeof fetch;
  let lab: TestGitLab;
  let gitea: TestForge;
  let ghe: TestForge;
  let tokens: { lab: string; gitea: string; ghe: string };
  const probes = (f: TestForge): string[] =>
    f.requests.filter((q) => /^\/api\/v[134]\/(version|meta)$/.test(q.path)).map((q) => q.path);
  beforeAll(async () => {
    [lab, gitea, ghe] = await Promise.all([
      TestGitLab.startGitLab(),
      TestForge.start("gitea"),
      TestForge.start("github"),
    ]);
    tokens = {
      lab: lab.addUser("harness-bot"),
      gitea: gitea.addUser("harness-bot"),
      ghe: ghe.addUser("harness-bot"),
    };
    lab.createRepo("org/platform", "policy", {});
    gitea.createRepo("org", "policy", {});
    ghe.createRepo("org", "policy", {});
  });
  afterAll(() => Promise.all([lab.dispose(), gitea.dispose(), ghe.dispose()]));

  it("github.com and gitlab.com are known by their hosts and asked nothing; a declaration contradicting them is refused", async () => {
    const hub = await detectForge(forgeRemote("git@github.com:org/policy.git"), "t", { fetch: offline });
    expect([hub.kind, hub.api]).toEqual(["github", "https://api.github.com"]);
    const gl = await detectForge(forgeRemote("https://gitlab.com/org/platform/policy.git"), "t", {
      declared: "gitlab",
      fetch: offline,
    });
    expect([gl.kind, gl.api]).toEqual(["gitlab", "https://gitlab.com/api/v4"]);
    await expect(
      detectForge(forgeRemote("https://github.com/org/policy.git"), "t", {
        declared: "gitlab",
        fetch: offline,
      }),
    ).rejects.toThrow(/forge = "gitlab" is declared, but github.com is GitHub/);
    await expect(
      detectForge(forgeRemote("https://gitlab.com/org/policy.git"), "t", {
        declared: "gitea",
        fetch: offline,
      }),
    ).rejects.toThrow(/forge = "gitea" is declared, but gitlab.com is GitLab/);
  });

  it("a declared forge is trusted: nothing is probed, and its API answers", async () => {
    for (const f of [lab, gitea, ghe]) f.requests.length = 0;
    const onLab = await detectForge(forgeRemote(lab.remoteOf("org/platform", "policy")), tokens.lab, {
      declared: "gitlab",
      fetch: trustingFetch(lab.caFile),
    });
    const onGitea = await detectForge(forgeRemote(gitea.remoteOf("org", "policy")), tokens.gitea, {
      declared: "gitea",
      fetch: trustingFetch(gitea.caFile),
    });
    const onGhe = await detectForge(forgeRemote(ghe.remoteOf("org", "policy")), tokens.ghe, {
      declared: "github",
      fetch: trustingFetch(ghe.caFile),
    });
    expect([onLab.api, onGitea.api, onGhe.api]).toEqual([
      `${lab.origin}/api/v4`,
      `${gitea.origin}/api/v1`,
      `${ghe.origin}/api/v3`,
    ]);
    for (const c of [onLab, onGitea, onGhe]) expect(await c.login()).toBe("harness-bot");
    expect([probes(lab), probes(gitea), probes(ghe)]).toEqual([[], [], []]);
    // Declared Gitea, a nested group is still only GitLab's.
    await expect(
      detectForge(forgeRemote(lab.remoteOf("org/platform", "policy")), tokens.lab, {
        declared: "gitea",
        fetch: offline,
      }),
    ).rejects.toThrow(/only GitLab has nested groups, and 127.0.0.1:\d+ is Gitea\/Forgejo/);
  });

  it("undeclared, Gitea answers /api/v1/version first and GitLab is asked nothing of it; GitLab answers it 404, then /api/v4/version 401, and is not taken for Gitea", async () => {
    for (const f of [lab, gitea, ghe]) f.requests.length = 0;
    const g = await detectForge(forgeRemote(gitea.remoteOf("org", "policy")), tokens.gitea, {
      fetch: trustingFetch(gitea.caFile),
    });
    const l = await detectForge(forgeRemote(lab.remoteOf("org/platform", "policy")), tokens.lab, {
      fetch: trustingFetch(lab.caFile),
    });
    const h = await detectForge(forgeRemote(ghe.remoteOf("org", "policy")), tokens.ghe, {
      fetch: trustingFetch(ghe.caFile),
    });
    expect([g.kind, l.kind, h.kind]).toEqual(["gitea", "gitlab", "github"]);
    expect(probes(gitea)).toEqual(["/api/v1/version"]);
    expect(probes(lab)).toEqual(["/api/v1/version", "/api/v4/version"]);
    expect(probes(ghe)).toEqual(["/api/v1/version", "/api/v4/version", "/api/v3/meta"]);
    // The probes carry no token.
    for (const f of [lab, gitea, ghe])
      for (const q of f.requests)
        expect([q.headers.authorization, q.headers["private-token"]]).toEqual([undefined, undefined]);
  });

  it("GitLab's stand-in answers /api/v4/version as GitLab does: 401 without a token, version and revision with one", async () => {
    const get = trustingFetch(lab.caFile);
    const anon = await get(`${lab.origin}/api/v4/version`);
    expect([anon.status, await anon.json()]).toEqual([401, { message: "401 Unauthorized" }]);
    const authed = await get(`${lab.origin}/api/v4/version`, { headers: { "private-token": tokens.lab } });
    expect(authed.status).toBe(200);
    expect(Object.keys((await authed.json()) as object).sort()).toEqual(["revision", "version"]);
    const v1 = await get(`${lab.origin}/api/v1/version`);
    expect(v1.status).toBe(404);
  });

  it("a host that answers as none of them is refused, naming the forge key that declares it", async () => {
    lab.failures.push({ method: "GET", path: /^\/api\/v4\/version$/, status: 404, message: "404 Not Found" });
    try {
      await expect(
        detectForge(forgeRemote(lab.remoteOf("org/platform", "policy")), tokens.lab, {
          fetch: trustingFetch(lab.caFile),
        }),
      ).rejects.toThrow(
        /answers neither as Gitea\/Forgejo .* declare it with forge = "github", "gitea" or "gitlab"/,
      );
    } finally {
      lab.failures.length = 0;
    }
  });
});
