/**
 * Clients of the daemon: `JournalService` for producers (`harness journal append`): over the daemon's Unix socket, or
 * a base URL for its TCP listener (`https://…` with a CA file and, under mutual TLS, a client certificate),
 * with the producer credential as a bearer token. HTTP/1.1 like the server (`server.ts`).
 */

import type { DescService } from "@bufbuild/protobuf";
import { type Client, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { type ClientTlsFiles, clientTlsOptions } from "../support/tls-listener.js";
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
    interceptors: token === undefined ? [] : [bearer(token)],
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
export const agentStatusClient = (target: RpcTarget): Client<typeof AgentStatusService> =>
  client(AgentStatusService, target, undefined);

export type JournalQueryClient = Client<typeof JournalQueryService>;

/** JournalQueryService (read tier): `harness journal tail`. */
export const journalQueryClient = (target: RpcTarget): JournalQueryClient =>
  client(JournalQueryService, target, undefined);

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
