/**
 * Clients of the daemon: `JournalService` for producers (`harness journal append`): over the daemon's Unix socket, or
 * a base URL for its TCP listener (`https://…` with a CA file and, under mutual TLS, a client certificate),
 * with the producer credential as a bearer token. HTTP/1.1 like the server (`server.ts`).
 */

import type { DescService } from "@bufbuild/protobuf";
import { type Client, Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { type ClientTlsFiles, clientTlsOptions } from "../support/tls-listener.js";
import { packageVersion } from "../support/version.js";
import { VERSION_HEADER, versionRefusal } from "../support/versions-meet.js";
import { AgentStatusService } from "./gen/harness/v1/agent_status_pb.js";
import { AgentService } from "./gen/harness/v1/agents_pb.js";
import { JournalService } from "./gen/harness/v1/journal_pb.js";
import { JournalQueryService } from "./gen/harness/v1/journal_query_pb.js";
import { RuleService } from "./gen/harness/v1/rules_pb.js";
import { TokenService } from "./gen/harness/v1/tokens_pb.js";
import { DEFAULT_READ_MAX_BYTES } from "./limits.js";

export type RpcTarget =
  | { readonly socketPath: string }
  | { readonly baseUrl: string; readonly tls?: ClientTlsFiles | undefined };

export type JournalClient = Client<typeof JournalService>;
export type RuleClient = Client<typeof RuleService>;
export type TokenClient = Client<typeof TokenService>;

const bearer =
  (token: string): Interceptor =>
  (next) =>
  (req) => {
    req.header.set("Authorization", `Bearer ${token}`);
    return next(req);
  };

/** Read once: every client of this process is the same build. */
let ownVersion: string | undefined;

/**
 * Says this build's version on every call (decision 0018), and refuses the answer of a daemon whose own
 * version does not meet it, as the daemon refuses a client's: whichever side is newer knows the rule.
 */
const versions: Interceptor = (next) => async (req) => {
  ownVersion ??= packageVersion();
  req.header.set(VERSION_HEADER, ownVersion);
  const res = await next(req);
  const daemon = res.header.get(VERSION_HEADER);
  const refusal = daemon === null ? undefined : versionRefusal(ownVersion, daemon);
  if (refusal !== undefined)
    throw new ConnectError(
      `versions do not meet: this client is harness ${ownVersion}, the daemon is ${JSON.stringify((daemon ?? "").slice(0, 64))}; upgrade the older one (docs/fleet.md, "Versions that meet")`,
      Code.FailedPrecondition,
    );
  return res;
};

function client<S extends DescService>(service: S, target: RpcTarget, token: string | undefined): Client<S> {
  const transport = createConnectTransport({
    httpVersion: "1.1",
    // Over a Unix socket the URL only names the path; the host is never resolved.
    ...("socketPath" in target
      ? { baseUrl: "http://localhost", nodeOptions: { socketPath: target.socketPath } }
      : {
          baseUrl: target.baseUrl,
          ...(target.tls === undefined ? {} : { nodeOptions: clientTlsOptions(target.tls) }),
        }),
    interceptors: token === undefined ? [versions] : [versions, bearer(token)],
    readMaxBytes: DEFAULT_READ_MAX_BYTES,
  });
  return createClient(service, transport);
}

export const journalClient = (target: RpcTarget, token?: string): JournalClient =>
  client(JournalService, target, token);

/** RuleService: the read tier over the socket needs no token; control calls need the control token. */
export const ruleClient = (target: RpcTarget, token?: string): RuleClient =>
  client(RuleService, target, token);

/** TokenService: every call needs the control token. */
export const tokenClient = (target: RpcTarget, controlToken: string): TokenClient =>
  client(TokenService, target, controlToken);

export type AgentClient = Client<typeof AgentService>;

/** AgentService: `CheckRun` read tier, no token over the socket; `ResumeRun` with the control token. */
export const agentClient = (target: RpcTarget, token?: string): AgentClient =>
  client(AgentService, target, token);

/** AgentStatusService (read tier): `harness doctor`'s agents row. */
export const agentStatusClient = (target: RpcTarget, token?: string): Client<typeof AgentStatusService> =>
  client(AgentStatusService, target, token);

export type JournalQueryClient = Client<typeof JournalQueryService>;

/** JournalQueryService (read tier): `harness journal tail`. */
export const journalQueryClient = (target: RpcTarget, token?: string): JournalQueryClient =>
  client(JournalQueryService, target, token);

const errorText = (e: unknown): string =>
  e instanceof ConnectError ? `${e.code} ${e.rawMessage} ${String(e.cause)}` : String(e);

/** Whether an RPC failed because no daemon answered (as opposed to the daemon refusing). */
export function unreachable(e: unknown): boolean {
  return /ECONNREFUSED|ENOENT|EPIPE|ECONNRESET|unavailable/i.test(errorText(e));
}

/**
 * Whether a call over TLS failed in or right after the handshake: under TLS 1.3 a daemon that refuses the
 * client's certificate sends an alert the client may read, or may only see as a dropped connection.
 */
export function handshakeFailed(e: unknown): boolean {
  return /socket hang up|ECONNRESET|EPIPE|alert|ERR_SSL|ERR_TLS|certificate/i.test(errorText(e));
}

/**
 * Whether the daemon may have received the request but its answer was lost (the connection dropped on
 * the way), as opposed to no daemon listening, when the request surely went nowhere.
 */
export function answerLost(e: unknown): boolean {
  return /ECONNRESET|EPIPE|socket hang up/i.test(errorText(e));
}
