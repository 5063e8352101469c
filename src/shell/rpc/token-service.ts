/**
 * TokenService (control tier): the operator mints, lists and revokes the tokens the daemon issues
 * (`issued-tokens.ts`). A token's text leaves the daemon once, in CreateToken's answer.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { InvalidArgumentError } from "../errors.js";
import {
  type IssuedTokenSchema,
  TokenKind as TokenKindMessage,
  type TokenService,
} from "./gen/harness/v1/tokens_pb.js";
import type { IssuedToken, IssuedTokens, TokenKind } from "./issued-tokens.js";
import { serve } from "./status.js";
import { CALLER, type Caller } from "./tiers.js";

const KIND_OF: Readonly<Record<TokenKindMessage, TokenKind | undefined>> = {
  [TokenKindMessage.UNSPECIFIED]: undefined,
  [TokenKindMessage.PRODUCER]: "producer",
  [TokenKindMessage.READ]: "read",
  [TokenKindMessage.GATEWAY]: "gateway",
  [TokenKindMessage.ENROLMENT]: "enrolment",
  [TokenKindMessage.CONTROL]: "control",
};

const MESSAGE_KIND: Readonly<Record<TokenKind, TokenKindMessage>> = {
  producer: TokenKindMessage.PRODUCER,
  read: TokenKindMessage.READ,
  gateway: TokenKindMessage.GATEWAY,
  enrolment: TokenKindMessage.ENROLMENT,
  control: TokenKindMessage.CONTROL,
};

/** At most this many ids a RevokeToken call. */
const MAX_REVOKE_IDS = 1000;

const optional = (s: string): string | undefined => (s === "" ? undefined : s);

const tokenMessage = (t: IssuedToken): MessageInitShape<typeof IssuedTokenSchema> => ({
  id: t.id,
  kind: MESSAGE_KIND[t.kind],
  source: t.source ?? "",
  harness: t.harness ?? "",
  run: t.run ?? "",
  label: t.label ?? "",
  createdMs: BigInt(t.createdMs),
  expiresMs: BigInt(t.expiresMs ?? 0),
  revokedMs: BigInt(t.revokedMs ?? 0),
});

/**
 * Refuses an operator's own control token what only the first one may do: mint another operator's, or
 * replace the first (decision 0018), so no operator can make themselves the owner.
 */
function firstOperatorOnly(caller: Caller | undefined, what: string): void {
  if (caller?.role === "controller" && caller.operator !== undefined)
    throw new ConnectError(
      `only the first control token may ${what}; ${caller.operator}'s control token may not`,
      Code.PermissionDenied,
    );
}

export interface TokenServiceDeps {
  readonly tokens: IssuedTokens;
  /** Writes a new control token to its file and puts it in force; returns the file. */
  readonly rotateControl: () => string;
}

export function tokenService({ tokens, rotateControl }: TokenServiceDeps): ServiceImpl<typeof TokenService> {
  return {
    createToken: (req, ctx) =>
      serve("CreateToken", () => {
        const kind = KIND_OF[req.kind];
        if (kind === undefined)
          throw new InvalidArgumentError("", "kind must be producer, read, gateway, enrolment or control");
        if (kind === "control") firstOperatorOnly(ctx.values.get(CALLER), "mint an operator's control token");
        const source = optional(req.source);
        const harness = optional(req.harness);
        const run = optional(req.run);
        const label = optional(req.label);
        return tokens.create({
          kind,
          ...(source === undefined ? {} : { source }),
          ...(harness === undefined ? {} : { harness }),
          ...(run === undefined ? {} : { run }),
          ...(label === undefined ? {} : { label }),
          ...(req.ttlMs === 0n ? {} : { ttlMs: Number(req.ttlMs) }),
        });
      }),
    listTokens: (req) =>
      serve("ListTokens", async () => ({
        tokens: (await tokens.list(req.includeRevoked)).map(tokenMessage),
      })),
    revokeToken: (req) =>
      serve("RevokeToken", async () => {
        if (req.ids.length > MAX_REVOKE_IDS)
          throw new InvalidArgumentError("", `at most ${MAX_REVOKE_IDS} ids a call (got ${req.ids.length})`);
        if ((req.ids.length === 0) === (req.run === ""))
          throw new InvalidArgumentError("", "give either token ids or a run");
        return { revoked: await (req.run === "" ? tokens.revoke(req.ids) : tokens.revokeRun(req.run)) };
      }),
    rotateControlToken: (_req, ctx) =>
      serve("RotateControlToken", () => {
        firstOperatorOnly(ctx.values.get(CALLER), "rotate the first control token");
        return { file: rotateControl() };
      }),
    enrol: (req, ctx) =>
      serve("Enrol", async () => {
        const caller = ctx.values.get(CALLER);
        // The tier check let only an enrolment code's holder through.
        const enrolment =
          caller?.role === "enrollee" ? await tokens.enrol(caller.code, req.harness) : undefined;
        if (enrolment === undefined)
          // An authorization failure, as the tier check's are: the code was good when the call arrived.
          throw new ConnectError(
            "the enrolment code was spent, revoked or has expired meanwhile",
            Code.PermissionDenied,
          );
        return {
          harness: enrolment.harness,
          observerId: enrolment.observer.id,
          observerToken: enrolment.observer.token,
          ledgerId: enrolment.ledger.id,
          ledgerToken: enrolment.ledger.token,
        };
      }),
  };
}
