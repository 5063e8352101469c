/**
 * What `harness mcp` and the daemon's MCP gateway agree on (SPEC-0029 REQ-15): where the gateway's
 * socket is, and how the relay presents the caller's token before the MCP stream starts.
 *
 * The token travels as one preamble line, `{"harness_mcp_token":"…"}\n`, before the first MCP message.
 * Why there and not elsewhere: MCP over stdio has no place for a credential (its authorization scheme is
 * HTTP's), and putting the token into `initialize` would make the relay parse and rewrite the protocol,
 * which is the work it must not do. After this one line the relay is a byte pipe. The agent's MCP config
 * hands the token to `harness mcp` in its environment (`HARNESS_MCP_TOKEN`), never on its command line,
 * where any user's `ps` could read it. The daemon identifies the caller from this token alone
 * (SPEC-0005 "Caller Identity"), never from a name the caller states.
 */
import * as path from "node:path";

/** The environment variable `harness mcp` reads its gateway token from. */
export const MCP_TOKEN_ENV = "HARNESS_MCP_TOKEN";

/** The most a preamble line may take; a token is far shorter. */
export const MAX_PREAMBLE_BYTES = 1024;

/**
 * A remote `harness mcp` (`--daemon https://…`, decision 0018) reaches the gateway through the daemon's
 * TLS listener: an HTTP/1.1 upgrade of this path to this protocol, after which the connection is what
 * the gateway socket's is (the preamble line, then MCP's lines). One listener, one certificate, mutual
 * TLS and the version check included, and no second port to open.
 */
export const MCP_UPGRADE = "harness-mcp";
export const MCP_UPGRADE_PATH = "/harness.v1.Gateway/Connect";

/** The gateway's socket, beside the RPC socket: `harness.sock` → `harness-mcp.sock`. */
export function mcpSocketPath(rpcSocketPath: string): string {
  const dir = path.dirname(rpcSocketPath);
  const base = path.basename(rpcSocketPath).replace(/\.sock$/, "");
  return path.join(dir, `${base}-mcp.sock`);
}

export function encodePreamble(token: string): string {
  return `${JSON.stringify({ harness_mcp_token: token })}\n`;
}

/** The token a preamble line carries, or undefined when the line is not one. */
export function decodePreamble(line: string): string | undefined {
  try {
    const v = JSON.parse(line) as unknown;
    if (typeof v !== "object" || v === null) return undefined;
    const token = (v as { harness_mcp_token?: unknown }).harness_mcp_token;
    return typeof token === "string" ? token : undefined;
  } catch {
    return undefined;
  }
}
