import { Code, ConnectError, createContextValues, type UnaryRequest } from "@connectrpc/connect";
import { describe, expect, it, vi } from "vitest";
import { CredentialHolder, type Credentials, digestToken } from "../../../src/shell/rpc/credentials.js";
import { JournalService } from "../../../src/shell/rpc/gen/harness/v1/journal_pb.js";
import {
  authorize,
  CALLER,
  type Caller,
  grants,
  identifyCaller,
  METHOD_TIERS,
  type Tier,
  tierInterceptor,
} from "../../../src/shell/rpc/tiers.js";
import { newToken } from "./helpers.js";

const tokens = { observer: newToken(), graph: newToken(), read: newToken(), control: newToken() };
const credentials: Credentials = {
  producers: new Map([
    ["observer", digestToken(tokens.observer)],
    ["graph", digestToken(tokens.graph)],
  ]),
  read: digestToken(tokens.read),
  control: digestToken(tokens.control),
};
const bearer = (t: string): string => `Bearer ${t}`;
const APPEND = "harness.v1.JournalService/Append";

describe("the tier table", () => {
  it("assigns every JournalService method a tier, and Append the producer tier", () => {
    for (const m of JournalService.methods)
      expect(METHOD_TIERS.has(`${JournalService.typeName}/${m.name}`), m.name).toBe(true);
    expect(METHOD_TIERS.get(APPEND)).toBe("producer");
  });

  it("denies a method missing from the table to every caller, the control token included", () => {
    for (const auth of [null, bearer(tokens.control), bearer(tokens.observer)])
      expect(authorize("harness.v1.RuleService/Frobnicate", auth, "socket", credentials)).toEqual({
        ok: false,
        reason: "harness.v1.RuleService/Frobnicate has no tier, so no caller may call it",
      });
  });
});

describe("the tier lattice", () => {
  const roles: Caller[] = [
    { role: "reader" },
    { role: "controller" },
    { role: "producer", source: "observer" },
  ];
  const tiers: Tier[] = ["producer", "read", "control"];
  it("read < control; producer stands apart: a producer is not a reader and no operator appends", () => {
    const matrix = roles.map((c) => tiers.filter((t) => grants(c, t)));
    expect(matrix).toEqual([["read"], ["read", "control"], ["producer"]]);
  });
});

describe("identifying a caller by an issued token", () => {
  const issuedToken = newToken();
  const gatewayToken = newToken();
  const withIssued: Credentials = {
    ...credentials,
    issued: [
      {
        id: "tk_1",
        digest: digestToken(issuedToken),
        kind: "producer",
        source: "ledger",
        harness: "alpha",
        expiresMs: 1000,
      },
      { id: "tk_2", digest: digestToken(gatewayToken), kind: "gateway", harness: "miner" },
    ],
  };
  it("a producer token is its source's, bound to its harness, until it expires", () => {
    expect(identifyCaller(bearer(issuedToken), "tcp", withIssued, 999)).toEqual({
      ok: true,
      caller: { role: "producer", source: "ledger", harness: "alpha" },
    });
    expect(identifyCaller(bearer(issuedToken), "tcp", withIssued, 1000)).toEqual({
      ok: false,
      reason: "unknown bearer token",
    });
  });
  it("a gateway token is identified but holds no tier", () => {
    expect(identifyCaller(bearer(gatewayToken), "socket", withIssued)).toEqual({
      ok: true,
      caller: { role: "gateway" },
    });
    for (const tier of ["producer", "read", "control"] as const)
      expect(grants({ role: "gateway" }, tier)).toBe(false);
  });
});

describe("identifying the caller", () => {
  it("gives a socket caller without a token the read tier", () => {
    expect(identifyCaller(null, "socket", credentials)).toEqual({ ok: true, caller: { role: "reader" } });
  });

  it("binds a producer token to its own source only", () => {
    expect(identifyCaller(bearer(tokens.graph), "socket", credentials)).toEqual({
      ok: true,
      caller: { role: "producer", source: "graph" },
    });
  });

  it("gives the control token the control tier on either listener", () => {
    for (const listener of ["socket", "tcp"] as const)
      expect(identifyCaller(bearer(tokens.control), listener, credentials)).toEqual({
        ok: true,
        caller: { role: "controller" },
      });
  });

  it("refuses a wrong token instead of reading it as no token, and a malformed header", () => {
    expect(identifyCaller(bearer(newToken()), "socket", credentials)).toEqual({
      ok: false,
      reason: "unknown bearer token",
    });
    expect(identifyCaller(`Basic ${tokens.read}`, "socket", credentials).ok).toBe(false);
    expect(identifyCaller("Bearer ", "socket", credentials).ok).toBe(false);
  });

  it("requires a TCP caller to present a token of at least 32 bytes; the read token reads", () => {
    expect(identifyCaller(null, "tcp", credentials)).toEqual({
      ok: false,
      reason: "a TCP caller must present a bearer token",
    });
    const short = "s".repeat(31);
    const shortCreds: Credentials = { producers: new Map(), read: digestToken(short) };
    expect(identifyCaller(bearer(short), "tcp", shortCreds)).toEqual({
      ok: false,
      reason: "a TCP caller's bearer token must be at least 32 bytes",
    });
    expect(identifyCaller(bearer(tokens.read), "tcp", credentials)).toEqual({
      ok: true,
      caller: { role: "reader" },
    });
  });
});

describe("authorizing a call", () => {
  it("lets only a producer credential append", () => {
    expect(authorize(APPEND, bearer(tokens.observer), "socket", credentials)).toEqual({
      ok: true,
      caller: { role: "producer", source: "observer" },
    });
    expect(authorize(APPEND, null, "socket", credentials)).toEqual({
      ok: false,
      reason: `${APPEND} needs the producer tier, which a reader does not hold: a producer appends with its source's own token, made by \`harness token create --producer SOURCE --out FILE\` or named in [server.producers] (docs/security.md, "Producer credentials")`,
    });
    expect(authorize(APPEND, bearer(tokens.control), "socket", credentials)).toEqual({
      ok: false,
      reason: `${APPEND} needs the producer tier, which a controller does not hold: a producer appends with its source's own token, made by \`harness token create --producer SOURCE --out FILE\` or named in [server.producers] (docs/security.md, "Producer credentials")`,
    });
    expect(authorize(APPEND, bearer(tokens.read), "tcp", credentials).ok).toBe(false);
  });
});

describe("the tier interceptor", () => {
  const request = (typeName: string, method: string, header: Headers): UnaryRequest =>
    ({
      stream: false,
      service: { typeName },
      method: { name: method },
      header,
      contextValues: createContextValues(),
    }) as unknown as UnaryRequest;

  it("refuses a method missing from the table with PERMISSION_DENIED before calling next", async () => {
    const next = vi.fn();
    const req = request(
      "harness.v1.FakeService",
      "Nope",
      new Headers({ authorization: bearer(tokens.control) }),
    );
    const err = await tierInterceptor(
      "socket",
      new CredentialHolder(credentials),
    )(next)(req).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.PermissionDenied);
    expect((err as ConnectError).rawMessage).toBe(
      "harness.v1.FakeService/Nope has no tier, so no caller may call it",
    );
    expect(next).not.toHaveBeenCalled();
  });

  it("hands the authorized caller to the handler as a context value", async () => {
    const req = request(
      "harness.v1.JournalService",
      "Append",
      new Headers({ authorization: bearer(tokens.graph) }),
    );
    let seen: Caller | undefined;
    await tierInterceptor(
      "socket",
      new CredentialHolder(credentials),
    )(async (r) => {
      seen = r.contextValues.get(CALLER);
      return {} as never;
    })(req);
    expect(seen).toEqual({ role: "producer", source: "graph" });
  });
});
