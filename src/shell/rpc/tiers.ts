/**
 * Who may call what. Every RPC method has one tier in `METHOD_TIERS`, the one table of them; the
 * interceptor below identifies the caller from its listener and bearer token and refuses, with
 * PERMISSION_DENIED and before the handler runs, a call its tier does not cover or a method missing from
 * the table. The server also refuses to start when it serves a method the table lacks.
 *
 * The tiers are not one chain. `read < control` is the operator's: a control caller may do whatever a
 * reader may. `producer` stands apart: a producer credential appends its own source's rows and nothing
 * else (it is not a reader, since producers are agents' helpers and the operator's view is not theirs),
 * and neither reader nor controller may append, so the journal is written only under a source's name.
 */
import { timingSafeEqual } from "node:crypto";
import { Code, ConnectError, createContextKey, type Interceptor } from "@connectrpc/connect";
import type { ProducerSource } from "../../core/sources.js";
import type { PeerIdentity } from "../support/tls-listener.js";
import {
  bearerToken,
  type CredentialHolder,
  type Credentials,
  digestToken,
  expired,
  FIRST_OPERATOR,
  type IssuedCredential,
  MIN_TOKEN_BYTES,
  type TokenDigest,
} from "./credentials.js";

export type Tier = "producer" | "read" | "control" | "enrol";

/** Every RPC method's tier, keyed `<package>.<Service>/<Method>`. A method missing here is denied. */
export const METHOD_TIERS: ReadonlyMap<string, Tier> = new Map<string, Tier>([
  ["harness.v1.JournalService/Append", "producer"],
  ["harness.v1.RuleService/CheckAdmission", "read"],
  ["harness.v1.RuleService/ClearHold", "control"],
  ["harness.v1.RuleService/Reload", "control"],
  ["harness.v1.RuleService/ListRules", "read"],
  ["harness.v1.RuleService/GetRule", "read"],
  ["harness.v1.RuleService/ListFires", "read"],
  ["harness.v1.RuleService/ExplainFire", "read"],
  ["harness.v1.RuleService/ListHolds", "read"],
  ["harness.v1.RuleService/ListAnnotations", "read"],
  ["harness.v1.RuleService/GetStatus", "read"],
  ["harness.v1.RuleService/Backtest", "read"],
  ["harness.v1.RuleService/WatchEvents", "read"],
  ["harness.v1.RuleService/PolicySynced", "control"],
  ["harness.v1.RuleService/ListProposals", "read"],
  ["harness.v1.RuleService/RecordProposal", "control"],
  ["harness.v1.TokenService/CreateToken", "control"],
  ["harness.v1.TokenService/ListTokens", "control"],
  ["harness.v1.TokenService/RevokeToken", "control"],
  ["harness.v1.TokenService/RotateControlToken", "control"],
  ["harness.v1.TokenService/Enrol", "enrol"],
  ["harness.v1.JournalQueryService/QueryJournal", "read"],
  ["harness.v1.JournalQueryService/CountJournal", "read"],
  ["harness.v1.RuleService/CountFires", "read"],
  ["harness.v1.RuleService/ListAnnotatedNodes", "read"],
  ["harness.v1.AgentService/CheckRun", "read"],
  ["harness.v1.AgentService/ResumeRun", "control"],
  ["harness.v1.AgentStatusService/LastRows", "read"],
]);

/** Where a call arrived: the operator's Unix socket, or the opt-in TCP listener. */
export type Listener = "socket" | "tcp";

export type Caller =
  | { readonly role: "reader" }
  /** The control tier; `operator` is an operator's control token's label, absent for the first control token. */
  | { readonly role: "controller"; readonly operator?: string }
  | {
      readonly role: "producer";
      readonly source: ProducerSource;
      /** An issued producer token bound to a harness appends only that harness's rows. */
      readonly harness?: string;
    }
  /** A gateway token (`harness token create --gateway`): the MCP gateway's, and no RPC tier's. */
  | { readonly role: "gateway" }
  /** An enrolment code (`harness token create --enrol`): one call, Enrol, for its harness's tokens. */
  | { readonly role: "enrollee"; readonly code: string; readonly harness: string };

const GRANTS: Readonly<Record<Caller["role"], readonly Tier[]>> = {
  reader: ["read"],
  controller: ["read", "control"],
  producer: ["producer"],
  gateway: [],
  enrollee: ["enrol"],
};

export const grants = (caller: Caller, tier: Tier): boolean => GRANTS[caller.role].includes(tier);

/** A caller identified or authorized, or why not. */
export type Decision =
  | { readonly ok: true; readonly caller: Caller }
  | { readonly ok: false; readonly reason: string };

/**
 * The caller an `Authorization` header (null when absent) names on a listener. On the socket no token
 * means the operator's read tier; over TCP a token of at least 32 bytes is required. A token presented
 * must be a configured one: a wrong token is refused rather than read as no token.
 */
export function identifyCaller(
  authorization: string | null,
  listener: Listener,
  credentials: Credentials,
  now: number = Date.now(),
): Decision {
  if (authorization === null)
    return listener === "socket"
      ? { ok: true, caller: { role: "reader" } }
      : { ok: false, reason: "a TCP caller must present a bearer token" };
  const token = bearerToken(authorization);
  if (token === undefined) return { ok: false, reason: "the Authorization header must be `Bearer <token>`" };
  if (listener === "tcp" && Buffer.byteLength(token, "utf8") < MIN_TOKEN_BYTES)
    return { ok: false, reason: `a TCP caller's bearer token must be at least ${MIN_TOKEN_BYTES} bytes` };
  const caller = matchToken(digestToken(token), credentials, now);
  return caller === undefined ? { ok: false, reason: "unknown bearer token" } : { ok: true, caller };
}

/**
 * The credential a token digest matches. Every configured digest is compared, in constant time and
 * without stopping at a match, so the time taken says nothing about which tokens exist.
 */
function matchToken(digest: TokenDigest, credentials: Credentials, now: number): Caller | undefined {
  // An expired token is compared like the rest and then refused, so expiry takes no other time than a match.
  let found: Caller | "expired" | undefined;
  const check = (candidate: TokenDigest | undefined, caller: Caller | "expired"): void => {
    if (candidate !== undefined && timingSafeEqual(candidate, digest) && found === undefined) found = caller;
  };
  for (const [source, candidate] of credentials.producers) check(candidate, { role: "producer", source });
  check(credentials.read, { role: "reader" });
  check(credentials.control, { role: "controller" });
  for (const issued of credentials.issued ?? [])
    check(issued.digest, expired(issued, now) ? "expired" : issuedCaller(issued));
  return found === "expired" ? undefined : found;
}

function issuedCaller(issued: IssuedCredential): Caller {
  switch (issued.kind) {
    case "producer":
      return {
        role: "producer",
        source: issued.source as ProducerSource,
        ...(issued.harness === undefined ? {} : { harness: issued.harness }),
      };
    case "read":
      return { role: "reader" };
    case "gateway":
      return { role: "gateway" };
    case "enrolment":
      return { role: "enrollee", code: issued.id, harness: issued.harness ?? "" };
    case "control":
      return { role: "controller", operator: issued.label ?? issued.id };
  }
}

/**
 * Who a control call acts as, for what it records (decision 0018): an operator's control token's label,
 * `operator` for the first control token; undefined for a caller that holds no control tier.
 */
export function operatorOf(caller: Caller | undefined): string | undefined {
  if (caller?.role !== "controller") return undefined;
  return caller.operator ?? FIRST_OPERATOR;
}

/** Whether a call of `method` (`<package>.<Service>/<Method>`) with this header on this listener may run. */
export function authorize(
  method: string,
  authorization: string | null,
  listener: Listener,
  credentials: Credentials,
  now: number = Date.now(),
): Decision {
  const tier = METHOD_TIERS.get(method);
  if (tier === undefined) return { ok: false, reason: `${method} has no tier, so no caller may call it` };
  const identified = identifyCaller(authorization, listener, credentials, now);
  if (!identified.ok) return identified;
  const { caller } = identified;
  if (!grants(caller, tier))
    return {
      ok: false,
      reason: `${method} needs the ${tier} tier, which a ${describe(caller)} does not hold${
        tier === "producer" ? PRODUCER_HINT : ""
      }`,
    };
  return { ok: true, caller };
}

// The operator's own tokens are the ones at hand, so a refused append says where a producer's comes from.
const PRODUCER_HINT =
  ': a producer appends with its source\'s own token, made by `harness token create --producer SOURCE --out FILE` or named in [server.producers] (docs/security.md, "Producer credentials")';

const describe = (caller: Caller): string =>
  caller.role === "producer"
    ? `producer credential (source ${caller.source})`
    : caller.role === "gateway"
      ? "gateway token (it is for the MCP gateway only)"
      : caller.role === "enrollee"
        ? "one-time enrolment code (it is for harness agents install --enrol-file only)"
        : caller.role;

/** The authorized caller, set by the interceptor for the handler (undefined when it did not run). */
export const CALLER = createContextKey<Caller | undefined>(undefined, { description: "harness RPC caller" });

/**
 * The verified client certificate a call arrived under, over mutual TLS (`support/tls-listener.ts`), set
 * from the connection by the server, never from anything the caller sends; undefined otherwise.
 */
export const PEER = createContextKey<PeerIdentity | undefined>(undefined, { description: "peer" });

/** The digest of the token the caller presented, undefined when it presented none. */
export const CREDENTIAL = createContextKey<TokenDigest | undefined>(undefined, {
  description: "harness RPC credential",
});

/**
 * Whether `credentials` still grant `caller` what the token it presented (`credential`) granted when it
 * was identified: a caller without a token (the socket's reader) has nothing to revoke.
 */
export function stillHeld(
  caller: Caller,
  credential: TokenDigest | undefined,
  credentials: Credentials,
  now: number = Date.now(),
): boolean {
  if (credential === undefined) return true;
  const held = matchToken(credential, credentials, now);
  if (held === undefined || held.role !== caller.role) return false;
  if (held.role === "controller") return caller.role === "controller" && held.operator === caller.operator;
  return held.role !== "producer" || (caller.role === "producer" && held.source === caller.source);
}

/**
 * Checks every call on one listener, against the credentials in force when the call arrives. Connect runs interceptors after decoding the request (within
 * `readMaxBytes`) and before the handler, so a denied call never reaches a handler.
 */
export function tierInterceptor(listener: Listener, credentials: CredentialHolder): Interceptor {
  return (next) => async (req) => {
    const method = `${req.service.typeName}/${req.method.name}`;
    const authorization = req.header.get("authorization");
    const decision = authorize(method, authorization, listener, credentials.current);
    if (!decision.ok) throw new ConnectError(decision.reason, Code.PermissionDenied);
    req.contextValues.set(CALLER, decision.caller);
    const token = authorization === null ? undefined : bearerToken(authorization);
    req.contextValues.set(CREDENTIAL, token === undefined ? undefined : digestToken(token));
    return await next(req);
  };
}
