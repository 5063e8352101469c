/** `--daemon`: a remote daemon is reached over https only, its URL bounded (decision 0014). */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { clientTarget, noAnswer, TargetError } from "../../../src/shell/cli/target.js";

const env = { XDG_CONFIG_HOME: path.join(os.tmpdir(), "harness-no-config"), XDG_RUNTIME_DIR: os.tmpdir() };

describe("--daemon", () => {
  it("an https URL becomes the rpc target with its TLS files; the socket stays the default", async () => {
    const t = await clientTarget({ env, daemon: "https://rules.example:7443/", caFile: "/ca.pem" });
    expect(t.rpc).toEqual({
      baseUrl: "https://rules.example:7443",
      tls: { caFile: "/ca.pem", certFile: undefined, keyFile: undefined },
    });
    expect(t.remote).toBe(true);
    expect(noAnswer(t.where)).toMatch(
      /^no answer from https:\/\/rules\.example:7443: the connection or its TLS handshake failed/,
    );
  });

  it("refuses plain http, a non-URL and an overlong one", async () => {
    await expect(clientTarget({ env, daemon: "http://rules.example:7443" })).rejects.toThrow(
      /over https only \(tokens must not cross the network in plaintext\)/,
    );
    await expect(clientTarget({ env, daemon: "rules.example" })).rejects.toThrow(TargetError);
    await expect(clientTarget({ env, daemon: `https://${"a".repeat(3000)}` })).rejects.toThrow(
      /longer than 2048/,
    );
  });

  it("without --daemon the socket is the target", async () => {
    const t = await clientTarget({ env, socket: "/run/h.sock" });
    expect(t).toMatchObject({ rpc: { socketPath: "/run/h.sock" }, where: "/run/h.sock", remote: false });
  });

  it("[client] daemon is the default, but not for a command that acts on this machine's own daemon", async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "harness-client-default-"));
    try {
      fs.mkdirSync(path.join(home, "harness"), { recursive: true, mode: 0o700 });
      fs.writeFileSync(
        path.join(home, "harness", "harness.toml"),
        '[client]\ndaemon = "https://team-daemon.example:7443"\n',
      );
      const withConfig = { XDG_CONFIG_HOME: home, XDG_RUNTIME_DIR: os.tmpdir() };
      const remote = await clientTarget({ env: withConfig });
      expect(remote).toMatchObject({ where: "https://team-daemon.example:7443", remote: true });
      // A local agents install, uninstall or a miner's run mints, revokes and reads on this machine.
      const local = await clientTarget({ env: withConfig, clientDefault: false });
      expect(local).toMatchObject({ remote: false, where: path.join(os.tmpdir(), "harness.sock") });
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
