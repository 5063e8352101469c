/**
 * `harness policy sync` on a private https policy repo (docs/decisions/0009): git over smart HTTP
 * (`git http-backend`) that answers 401 without HTTP Basic auth whose password is the repo's token, as a
 * private repository on a forge does. The sync reads the token from the repo's `credential_file` and
 * hands it to git through the pipe-fed credential helper `harness rules propose` uses, so no process it
 * starts holds it in its argv or environment, no output or file but `credential_file` holds it, and the
 * operator's own credential helper neither supplies nor stores it.
 */
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { basicCredential, isGitPath, serveGitHttp } from "../../../src/shell/demo/git-http-backend.js";
import { remoteTakesToken, tokenCredential } from "../../../src/shell/policy/sync.js";
import { filesUnder, scanUntilExit, spawnCli } from "../../support/process-scan.js";
import { CLI } from "../daemon-harness.js";
import { gitIn, PolicyRemote, ruleText, tempRoot } from "./git-fixtures.js";

const T = 60_000;
const TOKEN = `pol_${"k3Y".repeat(12)}`;

/** A private git host: every request needs Basic auth with `TOKEN` as its password. */
class PrivateGitHost {
  readonly users: string[] = [];
  refused = 0;
  /** Each git request waits this long, so a scan sees the processes while they run. */
  delayMs = 0;
  private constructor(
    private readonly server: http.Server,
    readonly origin: string,
  ) {}

  static async start(projectRoot: string): Promise<PrivateGitHost> {
    let host: PrivateGitHost | undefined;
    const server = http.createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      if (!isGitPath(url.pathname)) {
        res.writeHead(404).end();
        return;
      }
      const credential = basicCredential(req);
      if (credential?.password !== TOKEN) {
        if (host !== undefined) host.refused++;
        req.resume();
        res.writeHead(401, { "www-authenticate": 'Basic realm="private"' }).end();
        return;
      }
      host?.users.push(credential.user);
      req.pause();
      setTimeout(() => serveGitHttp(req, res, url, projectRoot, credential.user), host?.delayMs ?? 0);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    host = new PrivateGitHost(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return host;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let host: PrivateGitHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

interface World {
  readonly root: string;
  readonly env: NodeJS.ProcessEnv;
  readonly remote: PolicyRemote;
  readonly host: PrivateGitHost;
  readonly credentialFile: string;
  /** Where the operator's own credential helper (`git credential-store`) would keep what it is given. */
  readonly operatorStore: string;
}

async function world(withCredential: boolean): Promise<World> {
  const { root, env } = tempRoot();
  const remote = new PolicyRemote(root, "ops");
  remote.commit({ "rules/edit-watch.toml": ruleText("edit-watch") });
  host = await PrivateGitHost.start(root);
  const credentialFile = path.join(root, "secrets", "ops-forge.token");
  fs.mkdirSync(path.dirname(credentialFile), { recursive: true, mode: 0o700 });
  fs.writeFileSync(credentialFile, `${TOKEN}\n`, { mode: 0o600 });
  // The operator has a global credential helper that stores what git hands it: sync must not feed it.
  const operatorStore = path.join(root, "operator-credentials");
  fs.mkdirSync(env.HOME as string, { recursive: true });
  fs.writeFileSync(
    path.join(env.HOME as string, ".gitconfig"),
    `[credential]\n\thelper = store --file ${operatorStore}\n`,
  );
  const config = path.join(env.XDG_CONFIG_HOME as string, "harness", "harness.toml");
  fs.mkdirSync(path.dirname(config), { recursive: true });
  fs.writeFileSync(
    config,
    [
      "[policy_repo.ops]",
      `remote = "${host.origin}/remotes/ops.git"`,
      'branch = "main"',
      ...(withCredential ? [`credential_file = "${credentialFile}"`] : []),
      "",
    ].join("\n"),
  );
  return { root, env, remote, host, credentialFile, operatorStore };
}

const sync = (w: World) => spawnCli(CLI, ["policy", "sync", "--json"], w.env);

describe("policy sync with a policy repo's credential_file", () => {
  it(
    "policy sync clones and fast-forwards a private https policy repo with its credential_file",
    async () => {
      const w = await world(true);
      const first = sync(w);
      const firstScan = await scanUntilExit(first.child, TOKEN);
      expect(firstScan.exitCode, first.output().stderr).toBe(0);
      const cloned = JSON.parse(first.output().stdout).repos[0];
      expect(cloned).toMatchObject({ name: "ops", action: "cloned", branch: "main" });
      const next = w.remote.commit({ "rules/second.toml": ruleText("second") });
      const again = sync(w);
      const againScan = await scanUntilExit(again.child, TOKEN);
      expect(againScan.exitCode, again.output().stderr).toBe(0);
      expect(JSON.parse(again.output().stdout).repos[0]).toMatchObject({
        action: "fast_forwarded",
        commit: next,
      });
      expect(gitIn(cloned.dir, "rev-parse", "HEAD")).toBe(next);
      // git asked once per command without credentials, as a private remote requires, then sent the token.
      expect(w.host.refused).toBeGreaterThanOrEqual(2);
      expect(new Set(w.host.users)).toEqual(new Set(["x-access-token"]));
    },
    T,
  );

  it(
    "without credential_file the same private repo fails: could not read Username",
    async () => {
      const w = await world(false);
      const run = sync(w);
      const scan = await scanUntilExit(run.child, TOKEN);
      expect(scan.exitCode).toBe(1);
      expect(JSON.parse(run.output().stdout).repos[0].error).toMatch(/could not read Username/);
      expect(w.host.users).toEqual([]);
    },
    T,
  );

  it(
    "The policy credential never leaks: no environ or cmdline of git or any process policy sync starts, no output, no file but credential_file",
    async () => {
      const w = await world(true);
      w.host.delayMs = 150;
      const run = sync(w);
      const scan = await scanUntilExit(run.child, TOKEN);
      const { stdout, stderr } = run.output();
      expect(scan.exitCode, stderr).toBe(0);
      expect(scan.leaks).toEqual([]);
      // We did watch git at work: the clone, its HTTP helper and the credential helper's shell.
      expect(scan.commands.some((c) => /^git .* clone /.test(c))).toBe(true);
      expect(scan.commands.some((c) => c.includes("remote-http"))).toBe(true);
      expect(scan.commands.some((c) => c.includes("credential") || c.includes("cat"))).toBe(true);
      expect(stdout + stderr).not.toContain(TOKEN);
      expect(fs.existsSync(w.operatorStore)).toBe(false);
      const holding = filesUnder(w.root).filter(
        (f) => f !== w.credentialFile && fs.readFileSync(f).includes(Buffer.from(TOKEN)),
      );
      expect(holding).toEqual([]);
      const dir = JSON.parse(stdout).repos[0].dir as string;
      expect(fs.readFileSync(path.join(dir, ".git", "config"), "utf8")).not.toMatch(
        /@127\.0\.0\.1|credential|extraheader/i,
      );
    },
    T,
  );

  it("the token goes only to an https (or loopback http) remote, as the URL's user or x-access-token", () => {
    expect(remoteTakesToken("https://forge.example/org/policy.git")).toBe(true);
    expect(remoteTakesToken("http://127.0.0.1:3000/org/policy.git")).toBe(true);
    expect(remoteTakesToken("git@forge.example:org/policy.git")).toBe(false);
    expect(remoteTakesToken("ssh://git@forge.example/org/policy.git")).toBe(false);
    expect(remoteTakesToken("/srv/policy.git")).toBe(false);
    expect(tokenCredential("https://forge.example/org/policy.git", "t")).toEqual({
      username: "x-access-token",
      password: "t",
    });
    expect(tokenCredential("https://bot@forge.example/org/policy.git", "t").username).toBe("bot");
  });
});
