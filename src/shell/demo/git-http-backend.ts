/**
 * Git's smart HTTP protocol served by git itself: one request handed to `git http-backend` as a CGI
 * program (git-http-backend(1)), its answer relayed to the client. The caller checks the credential
 * first and names the user it belongs to, which git receives as `REMOTE_USER`, as the documentation's
 * authenticated-push setup does (`http.receivepack` is then on). The backend runs with no system or
 * global git config, on repositories under `projectRoot` only. `harness demo`'s local forge serves its
 * repositories this way, and so does the tests' forge.
 */
import { spawn } from "node:child_process";
import type { IncomingMessage, ServerResponse } from "node:http";

/** Where Debian's and most distributions' git packages install the CGI program. */
export const GIT_HTTP_BACKEND = "/usr/lib/git-core/git-http-backend";

/** A repository under one namespace or, as GitLab serves them, under nested groups. */
export const isGitPath = (pathname: string): boolean => /^(?:\/[^/]+)+\.git\//.test(pathname);

/** The user and password of an HTTP Basic `Authorization` header, if it has one. */
export function basicCredential(req: IncomingMessage): { user: string; password: string } | undefined {
  const basic = /^Basic (\S+)$/.exec(req.headers.authorization ?? "");
  if (basic === null) return undefined;
  const text = Buffer.from(basic[1] as string, "base64").toString("utf8");
  const colon = text.indexOf(":");
  return colon < 0 ? undefined : { user: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** Runs `git http-backend` for one authenticated request and relays its CGI answer. */
export function serveGitHttp(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  projectRoot: string,
  remoteUser: string,
): void {
  const header = (name: string): Record<string, string> => {
    const v = req.headers[name];
    return v === undefined ? {} : { [name]: String(v) };
  };
  const h = { ...header("content-length"), ...header("content-encoding"), ...header("git-protocol") };
  const child = spawn(GIT_HTTP_BACKEND, [], {
    env: {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: projectRoot,
      GIT_HTTP_EXPORT_ALL: "1",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      PATH_INFO: url.pathname,
      QUERY_STRING: url.search.replace(/^\?/, ""),
      REQUEST_METHOD: req.method ?? "GET",
      CONTENT_TYPE: req.headers["content-type"] ?? "",
      ...(h["content-length"] === undefined ? {} : { CONTENT_LENGTH: h["content-length"] }),
      ...(h["content-encoding"] === undefined ? {} : { HTTP_CONTENT_ENCODING: h["content-encoding"] }),
      ...(h["git-protocol"] === undefined ? {} : { GIT_PROTOCOL: h["git-protocol"] }),
      REMOTE_USER: remoteUser,
      REMOTE_ADDR: req.socket.remoteAddress ?? "127.0.0.1",
    },
    stdio: ["pipe", "pipe", "ignore"],
  });
  child.on("error", () => {
    if (!res.headersSent) res.writeHead(500);
    res.end();
  });
  child.stdin.on("error", () => {
    // The backend exiting before it read the whole request: its answer (or exit) says why.
  });
  req.pipe(child.stdin);
  let head = Buffer.alloc(0);
  let headerDone = false;
  child.stdout.on("data", (chunk: Buffer) => {
    if (headerDone) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf("\r\n\r\n");
    if (end < 0) return;
    headerDone = true;
    let status = 200;
    const headers: Record<string, string> = {};
    for (const line of head.subarray(0, end).toString("latin1").split("\r\n")) {
      const i = line.indexOf(":");
      const name = line.slice(0, i).trim();
      const value = line.slice(i + 1).trim();
      if (name.toLowerCase() === "status") status = Number(value.split(" ")[0]);
      else headers[name] = value;
    }
    res.writeHead(status, headers);
    res.write(head.subarray(end + 4));
  });
  child.on("close", () => {
    if (!headerDone) {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    } else res.end();
  });
}
