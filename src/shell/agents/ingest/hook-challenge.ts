/**
 * Proof that the http hook endpoint on `[agents] listen` is this daemon, not a process squatting on the
 * port (Claude Code's http hooks post the observer and ledger tokens, and every payload, to
 * whoever answers there). Each daemon draws a secret at start, kept in memory only. `GET
 * /hooks/challenge?nonce=N` answers HMAC-SHA256(secret, N), on the TCP listener and on the daemon's Unix
 * socket alike. A client (`harness agents install --mode http`, `harness doctor`) sends a fresh random
 * nonce to both and requires the two answers to be equal: the socket is the daemon (owner-only, 0600),
 * so an equal answer from the TCP port comes from a process holding the daemon's secret. A squatter
 * never sees the secret and cannot compute the answer; a nonce it has seen is never asked again. The
 * one relay left, forwarding the challenge to the daemon's socket, needs the socket, which only the
 * daemon's own user can open, and that user can read the token files anyway.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import * as http from "node:http";
import * as https from "node:https";
import { CHALLENGE_PATH, type RemoteDaemon } from "./hook-limits.js";

/** A nonce is 32 random bytes as hex; anything else is refused unread. */
const NONCE = /^[0-9a-f]{64}$/;
/** An answer is 32 bytes as hex; a longer body is not one. */
const MAX_ANSWER_BYTES = 64;
const TIMEOUT_MS = 3_000;

export class HookChallenge {
  private readonly secret = randomBytes(32);

  /** The answer to `nonce`, or undefined when it is not a nonce. */
  answer(nonce: string): string | undefined {
    if (!NONCE.test(nonce)) return undefined;
    return createHmac("sha256", this.secret).update(`harness hook challenge\0${nonce}`).digest("hex");
  }
}

/** Answers `GET /hooks/challenge?nonce=N`; every other request goes to `next`. */
export function withChallenge(challenge: HookChallenge, next: http.RequestListener): http.RequestListener {
  return (req, res) => {
    const url = new URL(req.url ?? "/", "http://hooks.invalid");
    if (url.pathname !== CHALLENGE_PATH) {
      next(req, res);
      return;
    }
    req.resume();
    const answer = req.method === "GET" ? challenge.answer(url.searchParams.get("nonce") ?? "") : undefined;
    if (answer === undefined) {
      res.writeHead(400, { "content-length": 0 }).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/plain", "content-length": answer.length }).end(answer);
  };
}

export type EndpointProof =
  /** The endpoint answered as the daemon on the socket. */
  | { readonly kind: "this_daemon" }
  /** Something answers on the address, but not with the daemon's answer: another process holds it. */
  | { readonly kind: "other"; readonly detail: string }
  /** Nothing accepts connections on the address. */
  | { readonly kind: "none"; readonly detail: string }
  /** The daemon's socket did not answer the challenge, so nothing can be proved. */
  | { readonly kind: "no_daemon"; readonly detail: string };

type Answer = { readonly status: number; readonly body: string } | { readonly error: NodeJS.ErrnoException };

function ask(
  target: { socketPath: string } | { host: string; port: number },
  nonce: string,
): Promise<Answer> {
  return new Promise((resolve) => {
    const req = http.request(
      { ...target, path: `${CHALLENGE_PATH}?nonce=${nonce}`, method: "GET", timeout: TIMEOUT_MS },
      (res) => {
        let body = "";
        res.setEncoding("latin1");
        res.on("data", (chunk: string) => {
          body += chunk;
          if (body.length > MAX_ANSWER_BYTES) res.destroy();
        });
        // `close` too: a destroyed answer (past its bound) ends with neither `end` nor `error`.
        const done = () => resolve({ status: res.statusCode ?? 0, body });
        res.on("end", done);
        res.on("close", done);
        res.on("error", () => resolve({ status: res.statusCode ?? 0, body: "" }));
      },
    );
    req.on("timeout", () => req.destroy(Object.assign(new Error("timed out"), { code: "ETIMEDOUT" })));
    req.on("error", (error: NodeJS.ErrnoException) => resolve({ error }));
    req.end();
  });
}

const equal = (a: string, b: string): boolean =>
  a.length === b.length && timingSafeEqual(Buffer.from(a, "latin1"), Buffer.from(b, "latin1"));

/** `host:port` or `[v6]:port` split; the config loader has checked the form. */
function hostPort(listen: string): { host: string; port: number } {
  const i = listen.lastIndexOf(":");
  const host = listen.slice(0, i);
  return { host: host.startsWith("[") ? host.slice(1, -1) : host, port: Number(listen.slice(i + 1)) };
}

/** Whether the endpoint at `listen` (`host:port`) is the daemon answering on `socketPath`. */
export async function proveHookEndpoint(listen: string, socketPath: string): Promise<EndpointProof> {
  const nonce = randomBytes(32).toString("hex");
  const expected = await ask({ socketPath }, nonce);
  if ("error" in expected || expected.status !== 200 || expected.body.length !== 64)
    return {
      kind: "no_daemon",
      detail:
        "error" in expected
          ? `no daemon answers on ${socketPath} (${expected.error.code ?? expected.error.message})`
          : `the daemon on ${socketPath} does not answer the hook endpoint's challenge (HTTP ${expected.status}; an older harness?)`,
    };
  const got = await ask(hostPort(listen), nonce);
  if ("error" in got)
    return got.error.code === "ECONNREFUSED"
      ? { kind: "none", detail: `nothing listens on ${listen}` }
      : { kind: "other", detail: `${listen} did not answer the challenge (${got.error.code ?? "error"})` };
  if (got.status === 200 && equal(got.body, expected.body)) return { kind: "this_daemon" };
  return {
    kind: "other",
    detail: `${listen} answers, but not as the daemon on ${socketPath} (HTTP ${got.status}): another process holds the port`,
  };
}

/** Whether a remote daemon's hook endpoint answers, or why not (a TLS refusal named as one). */
export type RemoteProbe =
  | { readonly kind: "answers" }
  | { readonly kind: "tls"; readonly detail: string }
  | { readonly kind: "unreachable"; readonly detail: string }
  | { readonly kind: "other"; readonly detail: string };

/** TLS errors that say the certificate, not the network, is the problem. */
const TLS_CODES = /CERT|SELF_SIGNED|UNABLE_TO|ERR_TLS|ERR_SSL|HOSTNAME|EPROTO|ALERT|ECONNRESET/;

/**
 * Asks a remote daemon's endpoint the challenge over https, with `tls` (the CA and client files' bytes):
 * a 64-digit answer is a harness daemon holding a certificate the CA signed. Its answer cannot be
 * checked against a socket here (the daemon is on another machine): the certificate is the proof.
 */
export function probeRemote(daemon: RemoteDaemon, tls: https.RequestOptions): Promise<RemoteProbe> {
  const nonce = randomBytes(32).toString("hex");
  return new Promise((resolve) => {
    const req = https.request(
      new URL(`${CHALLENGE_PATH}?nonce=${nonce}`, daemon.url),
      { ...tls, method: "GET", agent: false, timeout: TIMEOUT_MS },
      (res) => {
        let body = "";
        res.setEncoding("latin1");
        res.on("data", (chunk: string) => {
          body += chunk;
          if (body.length > MAX_ANSWER_BYTES) res.destroy();
        });
        // `close` too: a destroyed answer (past its bound) ends with neither `end` nor `error`.
        const done = () =>
          resolve(
            res.statusCode === 200 && /^[0-9a-f]{64}$/.test(body)
              ? { kind: "answers" }
              : {
                  kind: "other",
                  detail: `${daemon.url} answers, but not as a harness daemon's hook endpoint (HTTP ${res.statusCode})`,
                },
          );
        res.on("end", done);
        res.on("close", done);
        res.on("error", () => resolve({ kind: "other", detail: `${daemon.url} broke off its answer` }));
      },
    );
    req.on("timeout", () => req.destroy(Object.assign(new Error("timed out"), { code: "ETIMEDOUT" })));
    req.on("error", (e: NodeJS.ErrnoException) => {
      const code = e.code ?? e.message;
      resolve(
        TLS_CODES.test(code)
          ? {
              kind: "tls",
              detail: `the TLS handshake with ${daemon.url} failed (${code}): its certificate is not signed by the CA given (--ca-file), or it asks for a client certificate from another CA`,
            }
          : { kind: "unreachable", detail: `no answer from ${daemon.url} (${code})` },
      );
    });
    req.end();
  });
}
