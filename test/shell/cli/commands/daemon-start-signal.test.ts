/**
 * `harness daemon` listens for SIGTERM from its first moment: one that arrives while the daemon is
 * still starting closes it cleanly once started (store closed, socket gone), rather than killing the
 * process with the store open.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { DaemonApp } from "../../../../src/shell/app/daemon-app.js";
import { runDaemon } from "../../../../src/shell/cli/commands/daemon.js";

afterEach(() => vi.restoreAllMocks());

it("a SIGTERM during start closes the daemon cleanly once it has started", async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "harness-start-signal-"));
  const env = {
    HOME: root,
    XDG_CONFIG_HOME: path.join(root, "config"),
    XDG_STATE_HOME: path.join(root, "state"),
    XDG_RUNTIME_DIR: path.join(root, "run"),
  };
  fs.mkdirSync(env.XDG_RUNTIME_DIR, { mode: 0o700 });
  fs.mkdirSync(path.join(env.XDG_CONFIG_HOME, "harness"), { recursive: true });
  fs.writeFileSync(
    path.join(env.XDG_CONFIG_HOME, "harness", "harness.toml"),
    '[server]\nmetrics_listen = ""\n[agents]\nlisten = ""\n',
  );
  const start = DaemonApp.start.bind(DaemonApp);
  let started: DaemonApp | undefined;
  vi.spyOn(DaemonApp, "start").mockImplementation(async (options) => {
    // The signal arrives while the store is being opened and the rules loaded.
    process.emit("SIGTERM");
    started = await start(options);
    return started;
  });
  const err: string[] = [];
  const code = await runDaemon({}, { env, out: () => {}, err: (l) => err.push(l) });
  expect(code).toBe(0);
  expect(started).toBeDefined();
  expect(fs.existsSync(path.join(env.XDG_RUNTIME_DIR, "harness.sock"))).toBe(false);
  // Closed cleanly: the store's lock is released, so another daemon may open it.
  const again = await DaemonApp.start({ env });
  await again.close();
  expect(process.listenerCount("SIGTERM")).toBe(0);
  fs.rmSync(root, { recursive: true, force: true });
});
