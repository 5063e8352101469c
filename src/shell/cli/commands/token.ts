/**
 * `harness token create|list|revoke`: the operator's one way to manage the credentials the daemon
 * issues (TokenService, control tier). A producer or read token is written to a file (0600) and never
 * printed; a gateway token, which a run hands its agent as HARNESS_MCP_TOKEN, and an enrolment code,
 * which the operator hands a machine's owner, are printed unless `--out`. An operator's own control token
 * (`--control --label NAME`, decision 0018) is written to a file like a read token: what it does is
 * recorded under its label.
 */

import { parseDuration } from "../../../core/durations.js";
import { MAX_IDENT } from "../../../core/kinds.js";
import { isProducerSource, PRODUCER_SOURCES } from "../../../core/sources.js";
import { tokenClient } from "../../rpc/client.js";
import { writeTokenFile } from "../../rpc/credentials.js";
import { type IssuedToken, TokenKind } from "../../rpc/gen/harness/v1/tokens_pb.js";
import { failed } from "../client.js";
import { type Common, EXIT, type Io, iso, table } from "../io.js";
import { clientTarget, controlToken } from "../target.js";

export interface TokenCreateOptions extends Common {
  readonly producer?: string | undefined;
  readonly read?: boolean | undefined;
  readonly gateway?: boolean | undefined;
  readonly enrol?: boolean | undefined;
  readonly control?: boolean | undefined;
  readonly harness?: string | undefined;
  readonly run?: string | undefined;
  readonly label?: string | undefined;
  readonly ttl?: string | undefined;
  readonly out?: string | undefined;
  /** Replace an existing `--out` file. */
  readonly force?: boolean | undefined;
}

const KIND_NAMES: Readonly<Record<TokenKind, string>> = {
  [TokenKind.UNSPECIFIED]: "unspecified",
  [TokenKind.PRODUCER]: "producer",
  [TokenKind.READ]: "read",
  [TokenKind.GATEWAY]: "gateway",
  [TokenKind.ENROLMENT]: "enrolment",
  [TokenKind.CONTROL]: "control",
};

type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

interface CreateRequest {
  readonly kind: TokenKind;
  readonly source: string;
  readonly harness: string;
  readonly run: string;
  readonly label: string;
  readonly ttlMs: bigint;
}

/** The request the options describe, or the usage error that says what to change. */
function createRequest(o: TokenCreateOptions): Parsed<CreateRequest> {
  const kinds = [
    o.producer !== undefined,
    o.read === true,
    o.gateway === true,
    o.enrol === true,
    o.control === true,
  ].filter(Boolean).length;
  if (kinds !== 1)
    return {
      ok: false,
      error: "give exactly one of --producer SOURCE, --read, --gateway, --enrol, --control",
    };
  if (o.control === true && (o.label === undefined || o.label === ""))
    return { ok: false, error: "--control needs --label NAME: the operator whose actions it records" };
  if (o.control === true && (o.harness !== undefined || o.run !== undefined))
    return { ok: false, error: "--harness and --run are not for --control tokens" };
  if (o.enrol === true && (o.harness === undefined || o.harness === ""))
    return { ok: false, error: "--enrol needs --harness NAME: a code enrols one harness" };
  if (o.enrol === true && o.run !== undefined) return { ok: false, error: "--run is for --gateway tokens" };
  if (o.producer !== undefined && !isProducerSource(o.producer))
    return { ok: false, error: `--producer must be one of ${PRODUCER_SOURCES.join(", ")}` };
  if (o.gateway === true && (o.harness === undefined || o.harness === ""))
    return { ok: false, error: "--gateway needs --harness NAME" };
  if (o.gateway !== true && o.enrol !== true && o.run !== undefined)
    return { ok: false, error: "--run is for --gateway tokens" };
  if (o.read === true && o.harness !== undefined)
    return { ok: false, error: "--harness is for --producer and --gateway tokens" };
  if (o.gateway !== true && o.enrol !== true && o.out === undefined)
    return {
      ok: false,
      error: "--out FILE is required: a producer, read or control token is written to a file, never printed",
    };
  for (const [name, value] of [
    ["--harness", o.harness],
    ["--run", o.run],
    ["--label", o.label],
  ] as const)
    if (value !== undefined && (value === "" || [...value].length > MAX_IDENT))
      return { ok: false, error: `${name} must be 1 to ${MAX_IDENT} characters` };
  let ttlMs = 0n;
  if (o.ttl !== undefined) {
    const ms = parseDuration(o.ttl);
    if (ms === undefined || ms <= 0)
      return { ok: false, error: "--ttl must be a duration such as 12h or 7d" };
    ttlMs = BigInt(ms);
  }
  return {
    ok: true,
    value: {
      kind:
        o.producer !== undefined
          ? TokenKind.PRODUCER
          : o.read === true
            ? TokenKind.READ
            : o.enrol === true
              ? TokenKind.ENROLMENT
              : o.control === true
                ? TokenKind.CONTROL
                : TokenKind.GATEWAY,
      source: o.producer ?? "",
      harness: o.harness ?? "",
      run: o.run ?? "",
      label: o.label ?? "",
      ttlMs,
    },
  };
}

/** Runs `work` with a TokenService client holding the control token; maps failures to exit codes. */
async function withTokenClient(
  verb: string,
  options: Common,
  io: Io,
  work: (client: ReturnType<typeof tokenClient>) => Promise<number>,
): Promise<number> {
  const target = await clientTarget({ ...options, env: io.env });
  const control = await controlToken(target, `token ${verb}`);
  if ("error" in control) {
    io.err(control.error);
    return EXIT.usage;
  }
  try {
    return await work(tokenClient(target.rpc, control.token));
  } catch (e) {
    return failed(`token ${verb}`, target.where, e, io);
  }
}

export async function runTokenCreate(o: TokenCreateOptions, io: Io): Promise<number> {
  const request = createRequest(o);
  if (!request.ok) {
    io.err(`harness token create: ${request.error}`);
    return EXIT.usage;
  }
  return withTokenClient("create", o, io, async (client) => {
    const { id, token } = await client.createToken(request.value);
    if (o.out !== undefined) {
      try {
        writeTokenFile(o.out, token, o.force === true);
      } catch (e) {
        // The token is in force but nobody holds it: revoke it rather than leave it live.
        await client.revokeToken({ ids: [id] });
        io.err(
          `harness token create: cannot write ${o.out} (${(e as Error).message}); token ${id} was revoked${
            (e as NodeJS.ErrnoException).code === "EEXIST" ? "; --force replaces the file" : ""
          }`,
        );
        return EXIT.error;
      }
    }
    const kind = KIND_NAMES[request.value.kind];
    if (o.json === true)
      io.out(JSON.stringify({ id, kind, ...(o.out === undefined ? { token } : { file: o.out }) }));
    else if (o.out === undefined) io.out(token);
    else io.out(`${id}: ${kind} token written to ${o.out}`);
    return EXIT.ok;
  });
}

const tokenJson = (t: IssuedToken) => ({
  id: t.id,
  kind: KIND_NAMES[t.kind],
  source: t.source === "" ? null : t.source,
  harness: t.harness === "" ? null : t.harness,
  run: t.run === "" ? null : t.run,
  label: t.label === "" ? null : t.label,
  created: iso(t.createdMs),
  expires: iso(t.expiresMs),
  revoked: iso(t.revokedMs),
});

export async function runTokenList(
  o: Common & { readonly all?: boolean | undefined },
  io: Io,
): Promise<number> {
  return withTokenClient("list", o, io, async (client) => {
    const { tokens } = await client.listTokens({ includeRevoked: o.all === true });
    if (o.json === true) {
      io.out(JSON.stringify({ tokens: tokens.map(tokenJson) }));
      return EXIT.ok;
    }
    const rows = tokens.map((t) => {
      const j = tokenJson(t);
      const bound = [j.source, j.harness, j.run].filter((x) => x !== null).join(" ");
      const state =
        j.revoked !== null ? `revoked ${j.revoked}` : j.expires !== null ? `until ${j.expires}` : "in force";
      return [j.id, j.kind, bound, j.label ?? "", j.created ?? "", state];
    });
    for (const line of table(["ID", "KIND", "BOUND TO", "LABEL", "CREATED", "STATE"], rows)) io.out(line);
    return EXIT.ok;
  });
}

export async function runTokenRevoke(
  ids: readonly string[],
  o: Common & { readonly run?: string | undefined },
  io: Io,
): Promise<number> {
  if ((ids.length === 0) === (o.run === undefined || o.run === "")) {
    io.err("harness token revoke: give token ids or --run RUN");
    return EXIT.usage;
  }
  return withTokenClient("revoke", o, io, async (client) => {
    const { revoked } = await client.revokeToken({ ids: [...ids], run: o.run ?? "" });
    const missed = ids.filter((id) => !revoked.includes(id));
    if (o.json === true) io.out(JSON.stringify({ revoked, not_revoked: missed }));
    else {
      for (const id of revoked) io.out(`revoked ${id}`);
      if (o.run !== undefined && revoked.length === 0)
        io.out(`no gateway token of run ${o.run} was in force`);
    }
    for (const id of missed) io.err(`harness token revoke: ${id}: no such token in force`);
    return missed.length === 0 ? EXIT.ok : EXIT.failed;
  });
}

export async function runTokenRotateControl(o: Common, io: Io): Promise<number> {
  return withTokenClient("rotate-control", o, io, async (client) => {
    const { file } = await client.rotateControlToken({});
    if (o.json === true) io.out(JSON.stringify({ file }));
    else io.out(`control token rotated: the new one is in ${file}; the old one is refused`);
    return EXIT.ok;
  });
}
