/**
 * Finding 8 of issue 26, port squat, against real daemons: a daemon that cannot bind a listener its
 * config names exits non-zero, naming the address and the holder; `harness agents install --mode http`
 * and `harness doctor` prove the endpoint on `[agents] listen` is this daemon (`agents/ingest/hook-challenge.ts`)
 * and refuse a squatter, here a server answering the challenge with a secret of its own, as another
 * harness daemon on the port would.
 */
import * as fs from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import * as path from "node:path";
import { afterEach, expect, it } from "vitest";
import { HookChallenge, withChallenge } from "../../../src/shell/agents/ingest/hook-challenge.js";
import { freePort, TestFleet } from "../daemon-harness.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function fleet(config: string): TestFleet {
  const f = new TestFleet({ config });
  cleanups.push(() => f.dispose());
  return f;
}

/** Listens on `port` until the test ends. */
async function squat(server: net.Server, port: number): Promise<void> {
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
}

/** Another daemon's hook endpoint: it answers the challenge, with its own secret. */
const otherDaemon = () =>
  http.createServer(
    withChallenge(new HookChallenge(), (_req, res) => {
      res.writeHead(200).end();
    }),
  );

const configFile = (f: TestFleet) => path.join(f.root, "config", "harness", "harness.toml");
const setListen = (f: TestFleet, listen: string) =>
  fs.writeFileSync(
    configFile(f),
    fs.readFileSync(configFile(f), "utf8").replace(/^listen = ".*"$/m, `listen = "${listen}"`),
  );

interface DoctorJson {
  readonly checks: readonly { readonly name: string; readonly status: string; readonly detail: string }[];
}

it("finding 8: a daemon whose [agents] listen, metrics or [server] listen port another process holds exits non-zero, naming the address and the holder", async () => {
  const port = await freePort();
  await squat(net.createServer(), port);
  const hooks = fleet(`[agents]\nlisten = "127.0.0.1:${port}"`);
  const failed = await hooks.start().catch((e: Error) => e.message);
  expect(await hooks.exited()).toBe(1);
  expect(failed).toContain(
    `cannot listen on [agents] listen 127.0.0.1:${port}: the address is in use, held by pid ${process.pid}`,
  );

  const metrics = fleet("");
  fs.writeFileSync(
    configFile(metrics),
    fs
      .readFileSync(configFile(metrics), "utf8")
      .replace('metrics_listen = "127.0.0.1:0"', `metrics_listen = "127.0.0.1:${port}"`),
  );
  const failedMetrics = await metrics.start().catch((e: Error) => e.message);
  expect(await metrics.exited()).toBe(1);
  expect(failedMetrics).toContain(`cannot listen on [server] metrics_listen 127.0.0.1:${port}`);
  expect(failedMetrics).toContain(`held by pid ${process.pid}`);

  const tcp = fleet("");
  fs.writeFileSync(
    configFile(tcp),
    fs
      .readFileSync(configFile(tcp), "utf8")
      .replace(
        'metrics_listen = "127.0.0.1:0"',
        `metrics_listen = "127.0.0.1:0"\nlisten = "127.0.0.1:${port}"`,
      ),
  );
  const failedTcp = await tcp.start().catch((e: Error) => e.message);
  expect(await tcp.exited()).toBe(1);
  expect(failedTcp).toContain(`cannot listen on [server] listen 127.0.0.1:${port}: the address is in use`);
  // Nothing of the failed start is left listening: its socket is free for the next daemon.
  expect(fs.existsSync(tcp.socketPath)).toBe(false);
});

it("finding 8: agents install --mode http and doctor pass on the daemon's own endpoint, and refuse a squatter, writing nothing", async () => {
  const port = await freePort();
  const f = fleet(`[agents]\nlisten = "127.0.0.1:${port}"`);
  await f.start();
  const project = path.join(f.root, "project");
  fs.mkdirSync(project);
  const settings = path.join(project, ".claude", "settings.local.json");
  const install = () =>
    f.cli(["agents", "install", "claude-code", "--harness", "web", "--project", project, "--mode", "http"]);
  const doctor = async () => {
    const r = await f.cli(["doctor", "--json"]);
    return {
      code: r.code,
      listen: (JSON.parse(r.stdout) as DoctorJson).checks.find((c) => c.name === "listen"),
    };
  };

  expect((await doctor()).listen).toMatchObject({
    status: "pass",
    detail: `127.0.0.1:${port} answers as this daemon`,
  });
  const ok = await install();
  expect(ok.code, ok.stderr).toBe(0);
  expect(fs.existsSync(settings)).toBe(true);
  expect(
    (await f.cli(["agents", "uninstall", "claude-code", "--harness", "web", "--project", project])).code,
  ).toBe(0);

  // The daemon restarts without the listener (the port was busy, say) while the config names it, and
  // another daemon holds the port.
  await f.stop();
  setListen(f, "");
  await f.start();
  setListen(f, `127.0.0.1:${port}`);
  await squat(otherDaemon(), port);

  const tokenCount = async () =>
    (JSON.parse((await f.cli(["token", "list", "--all", "--json"])).stdout) as { tokens: unknown[] }).tokens
      .length;
  const before = await tokenCount();
  const refused = await install();
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain(`127.0.0.1:${port} answers, but not as the daemon on ${f.socketPath}`);
  expect(refused.stderr).toContain("nothing was written");
  expect(fs.existsSync(settings)).toBe(false);
  expect(await tokenCount()).toBe(before);

  const squatted = await doctor();
  expect(squatted.code).toBe(1);
  expect(squatted.listen?.status).toBe("fail");
  expect(squatted.listen?.detail).toContain("another process holds the port");
});

it("finding 8: a squatter that is not a harness daemon at all is refused too", async () => {
  const port = await freePort();
  const f = fleet('[agents]\nlisten = ""');
  await f.start();
  setListen(f, `127.0.0.1:${port}`);
  // Answers 200 with a body of the right length: only the daemon's secret makes the right one.
  await squat(
    http.createServer((_req, res) => {
      res.writeHead(200).end("0".repeat(64));
    }),
    port,
  );
  const r = await f.cli(["doctor", "--json"]);
  expect(r.code).toBe(1);
  expect((JSON.parse(r.stdout) as DoctorJson).checks.find((c) => c.name === "listen")?.status).toBe("fail");
});
