/**
 * The command hook's one HTTP request (`raw-http.ts`), against real Unix-socket servers: the answer is
 * taken as soon as its `Content-Length` bytes are in, not at the server's close (which Node's server
 * delays past a hook row's commit), and an answer without a length still ends at the close.
 */
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RawHttpError, rawPost } from "../../../../src/shell/agents/forwarder/raw-http.js";

const dirs: string[] = [];
const servers: net.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A server that reads the request and answers `reply`; it closes the connection only if `close`. */
async function serve(reply: string[], close: boolean): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-raw-http-"));
  dirs.push(dir);
  const sock = path.join(dir, "s.sock");
  const open: net.Socket[] = [];
  const server = net.createServer((c) => {
    open.push(c);
    c.once("data", () => {
      for (const part of reply) c.write(part);
      if (close) c.end();
    });
  });
  server.on("close", () => {
    for (const c of open) c.destroy();
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(sock, r));
  return sock;
}

const post = (sock: string, timeoutMs = 10_000) =>
  rawPost(sock, "/hooks/claude-code", { "Content-Type": "application/json" }, Buffer.from("{}"), timeoutMs);

describe("rawPost", () => {
  it("takes the answer once its Content-Length bytes are in, while the server keeps the connection open", async () => {
    const sock = await serve(
      ["HTTP/1.1 200 OK\r\nContent-Length: 11\r\nX-Harness-Row: admitted\r\n\r\n", '{"ok":true}'],
      false,
    );
    const started = Date.now();
    const r = await post(sock);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(r.status).toBe(200);
    expect(r.headers.get("x-harness-row")).toBe("admitted");
    expect(r.body.toString()).toBe('{"ok":true}');
  });

  it("an answer without a length ends at the server's close", async () => {
    const sock = await serve(["HTTP/1.1 200 OK\r\n\r\n", "all of ", "it"], true);
    expect((await post(sock)).body.toString()).toBe("all of it");
  });

  it("a body shorter than its length, left open, times out rather than being taken", async () => {
    const sock = await serve(["HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n", "short"], false);
    await expect(post(sock, 300)).rejects.toThrow(RawHttpError);
  });
});
