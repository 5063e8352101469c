/**
 * An agent's side of the gateway for tests: the MCP SDK's own `Client` over `StdioClientTransport`,
 * launching the built `harness mcp` with a fleet's environment and a gateway token, as an agent's MCP
 * config would.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { expect } from "vitest";
import { CLI, type TestFleet } from "../daemon-harness.js";

export interface McpSession {
  readonly client: Client;
  /** What `harness mcp` wrote to stderr. */
  stderr(): string;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** A call that must succeed: its wrapped data (structured content and text agree). */
  data(name: string, args?: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export async function mcpSession(fleet: TestFleet, token: string | undefined): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp"],
    env: {
      ...(fleet.env as Record<string, string>),
      ...(token === undefined ? {} : { HARNESS_MCP_TOKEN: token }),
    },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const client = new Client({ name: "gateway-test", version: "1.0.0" });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  return {
    client,
    stderr: () => stderr,
    call,
    data: async (name, args = {}) => {
      const r = await call(name, args);
      expect(r.isError, textOf(r)).toBeFalsy();
      const wrapped = JSON.parse(textOf(r)) as {
        harness_memory_data: { trust: string; source: string; data: Record<string, unknown> };
      };
      expect(wrapped.harness_memory_data.trust).toBe("untrusted");
      // The structured content is the same wrapper: older clients read the text, newer the structure.
      expect(r.structuredContent).toEqual(wrapped);
      return wrapped.harness_memory_data.data;
    },
    close: () => client.close(),
  };
}

export const textOf = (r: CallToolResult): string =>
  r.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");

/** A gateway token minted through the real CLI (`harness token create --gateway`). */
export async function gatewayToken(fleet: TestFleet, harness: string, run?: string): Promise<string> {
  const r = await fleet.cli([
    "token",
    "create",
    "--gateway",
    "--harness",
    harness,
    ...(run === undefined ? [] : ["--run", run]),
    "--json",
  ]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as { token: string }).token;
}
