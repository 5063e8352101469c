/**
 * A fleet on one machine over real network namespaces (issue 32): a "server" namespace and laptops, each
 * laptop joined to the server by a veth pair of its own. The server holds `SERVER_ADDRESS` on its
 * loopback, which every laptop routes to through its link, so a daemon listening there is one address
 * for the whole lab, off loopback as a real server is. Addresses exist only inside the namespaces; names
 * carry the test worker's pid, so parallel workers never meet; `dispose` deletes every namespace (and
 * with them the links), and is safe to call twice. Needs root and iproute2 (`.ci/run` installs it).
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { makeHomes } from "./homes.js";
import { type CliResult, runProcess } from "./run-process.js";

/** The daemon's address in every lab: on the server's loopback, routed to from each laptop. */
export const SERVER_ADDRESS = "10.77.0.1";

/** Namespaces can be made here: root with `ip`. Off CI a test may skip without them; on CI it must not. */
export const NETNS_AVAILABLE = ((): boolean => {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync("ip", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

const ip = (args: readonly string[]): void => {
  execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] });
};

let labs = 0;

export interface Laptop {
  readonly ns: string;
  /** This laptop's address on its link to the server. */
  readonly address: string;
  /** A home of its own (HOME and the XDG directories), as another machine has. */
  readonly root: string;
  readonly env: NodeJS.ProcessEnv;
  /** Runs any program on this laptop, with its environment. */
  run(
    command: string,
    args: readonly string[],
    options?: { stdin?: string; cwd?: string },
  ): Promise<CliResult>;
  /**
   * Takes this laptop's interface down (`false`), as a laptop losing its network does: its routes go and
   * a connection fails at once; or up again (`true`), its route to the server back.
   */
  link(up: boolean): void;
}

export interface Lab {
  readonly server: string;
  readonly laptops: readonly Laptop[];
  dispose(): void;
}

/** Makes a server namespace and `count` laptops linked to it; deletes what it made if any step fails. */
export function makeLab(count: number): Lab {
  labs += 1;
  const prefix = `hr${process.pid}x${labs}`;
  const server = `${prefix}s`;
  const made: string[] = [];
  const dispose = () => {
    for (const ns of made.splice(0)) {
      try {
        ip(["netns", "del", ns]);
      } catch {
        // Already gone: dispose runs from `finally` and may run twice.
      }
    }
  };
  try {
    ip(["netns", "add", server]);
    made.push(server);
    ip(["-n", server, "link", "set", "lo", "up"]);
    ip(["-n", server, "addr", "add", `${SERVER_ADDRESS}/32`, "dev", "lo"]);
    const laptops: Laptop[] = [];
    for (let i = 1; i <= count; i++) {
      const ns = `${prefix}l${i}`;
      ip(["netns", "add", ns]);
      made.push(ns);
      ip(["-n", ns, "link", "set", "lo", "up"]);
      // Both ends made inside the namespaces, so their names never meet the host's or another lab's.
      ip(["-n", server, "link", "add", `l${i}`, "type", "veth", "peer", "name", "up0", "netns", ns]);
      const serverSide = `10.77.${i}.1`;
      const address = `10.77.${i}.2`;
      ip(["-n", server, "addr", "add", `${serverSide}/24`, "dev", `l${i}`]);
      ip(["-n", ns, "addr", "add", `${address}/24`, "dev", "up0"]);
      ip(["-n", server, "link", "set", `l${i}`, "up"]);
      ip(["-n", ns, "link", "set", "up0", "up"]);
      ip(["-n", ns, "route", "add", `${SERVER_ADDRESS}/32`, "via", serverSide]);
      laptops.push(makeLaptop(ns, address, serverSide));
    }
    return {
      server,
      laptops,
      dispose: () => {
        dispose();
        for (const l of laptops) fs.rmSync(l.root, { recursive: true, force: true });
      },
    };
  } catch (e) {
    dispose();
    throw e;
  }
}

function makeLaptop(ns: string, address: string, gateway: string): Laptop {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `harness-${ns}-`));
  const env = makeHomes(root);
  const run = (command: string, args: readonly string[], options: { stdin?: string; cwd?: string } = {}) =>
    runProcess("ip", ["netns", "exec", ns, command, ...args], { env, ...options });
  return {
    ns,
    address,
    root,
    env,
    run,
    link: (up) => {
      ip(["-n", ns, "link", "set", "up0", up ? "up" : "down"]);
      // Down took the route with the interface; the address's own route comes back with it, this one not.
      if (up) ip(["-n", ns, "route", "replace", `${SERVER_ADDRESS}/32`, "via", gateway]);
    },
  };
}
