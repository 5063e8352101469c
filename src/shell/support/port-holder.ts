/**
 * Who holds a TCP port the daemon could not bind (a squatter on `[agents] listen` would be
 * handed the hooks' tokens), for the error the daemon exits with. Linux only, best effort: the
 * listening socket's inode and owner from `/proc/net/tcp{,6}`, then the process whose open files
 * include that socket, where `/proc/<pid>/fd` is readable (another user's is not: then only the uid is
 * known). Anything unreadable or absent (another OS) yields what is known, or "unknown".
 */
import * as fs from "node:fs";

/** The scan's bounds: a host with more processes or open files than this is searched only so far. */
const MAX_PROCESSES = 10_000;
const MAX_FDS = 200_000;
const LISTEN_STATE = "0A";

interface Listening {
  readonly inode: string;
  readonly uid: string;
}

/** The sockets listening on `port` (any address: a wildcard bind holds the loopback port too). */
function listeners(port: number): Listening[] {
  const found: Listening[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = fs.readFileSync(table, "latin1");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      const local = cols[1];
      if (local === undefined || cols[3] !== LISTEN_STATE) continue;
      const hexPort = local.slice(local.lastIndexOf(":") + 1);
      if (Number.parseInt(hexPort, 16) !== port) continue;
      const uid = cols[7];
      const inode = cols[9];
      if (uid !== undefined && inode !== undefined && inode !== "0") found.push({ inode, uid });
    }
  }
  return found;
}

/** The pid whose open files include `socket:[inode]`, among the processes this user may look into. */
function ownerOf(inode: string): number | undefined {
  const target = `socket:[${inode}]`;
  let pids: string[];
  try {
    pids = fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {
    return undefined;
  }
  let fds = 0;
  for (const pid of pids.slice(0, MAX_PROCESSES)) {
    let entries: string[];
    try {
      entries = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of entries) {
      if (++fds > MAX_FDS) return undefined;
      try {
        if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === target) return Number(pid);
      } catch {
        // Closed since the listing, or not ours to read.
      }
    }
  }
  return undefined;
}

/** A process name as one printable line: another program's name is data, never a terminal escape. */
const printableName = (s: string): string =>
  s
    .trim()
    .replace(/[^\x20-\x7e]/g, "?")
    .slice(0, 64);

/** "pid 1234 (node), uid 1000", "uid 1001 (pid not readable)", or "unknown". */
export function portHolder(port: number): string {
  const [held] = listeners(port);
  if (held === undefined) return "unknown";
  const pid = ownerOf(held.inode);
  if (pid === undefined) return `uid ${held.uid} (pid not readable)`;
  let name = "";
  try {
    name = printableName(fs.readFileSync(`/proc/${pid}/comm`, "latin1"));
  } catch {
    // Exited since: the pid is still the answer.
  }
  return `pid ${pid}${name === "" ? "" : ` (${name})`}, uid ${held.uid}`;
}
