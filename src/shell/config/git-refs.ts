/**
 * What a policy repo's `remote` and `branch` may be (SPEC-0029 REQ-2), checked as data before git ever
 * sees them: the config loader refuses a bad one with its key and position, and the git wrapper checks
 * again before each call (`../policy/git.ts`).
 */

// `ext::sh -c …`, `fd::3` and every other `<transport>::<address>` form makes git run a helper program.
const TRANSPORT_HELPER = /^[A-Za-z][A-Za-z0-9+.-]*::/;
const URL_SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
const ALLOWED_SCHEMES = new Set(["https", "ssh", "git", "file", "git+ssh", "ssh+git"]);
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * A plain `http://` URL to this machine's loopback interface (127.0.0.1, localhost, [::1]), the one
 * place an http remote is allowed: a forge credential sent there never leaves the machine (the local
 * forge `harness demo` runs). Every other http URL is refused.
 */
export function isLoopbackHttp(remote: string): boolean {
  if (!/^http:\/\//i.test(remote)) return false;
  try {
    return LOOPBACK_HOSTS.has(new URL(remote).hostname.toLowerCase());
  } catch {
    return false;
  }
}
// `[user@]host:path`, git's scp-like ssh form: a colon before any slash.
const SCP_LIKE = /^[^/:]+:/;

/** Why git may not be given `remote`, or undefined when it may: an address, never a program. */
export function remoteProblem(remote: string): string | undefined {
  if (remote === "") return "empty";
  if (remote.startsWith("-")) return 'starts with "-", which git would read as an option';
  if (TRANSPORT_HELPER.test(remote)) return "a transport helper (<transport>::…) runs a program";
  if (/[\0\n\r]/.test(remote)) return "contains a control character";
  const scheme = URL_SCHEME.exec(remote)?.[1]?.toLowerCase();
  if (scheme !== undefined)
    return ALLOWED_SCHEMES.has(scheme) || isLoopbackHttp(remote)
      ? undefined
      : `scheme ${scheme} (allowed: https, ssh, git, file, and http to a loopback address)`;
  if (remote.startsWith("/") || SCP_LIKE.test(remote)) return undefined;
  return "a relative path (give the local repository's absolute path)";
}

/**
 * The host a forge remote names, lower-cased (`https://`, `ssh://`, scp-like `git@host:path`), or
 * undefined for a remote on no forge (a local path, `file://`, `git://`) or one that is not a URL.
 */
export function forgeHost(remote: string): string | undefined {
  const scheme = URL_SCHEME.exec(remote)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    if (remote.startsWith("/") || !SCP_LIKE.test(remote)) return undefined;
    return remote.slice(0, remote.indexOf(":")).replace(/^.*@/, "").toLowerCase();
  }
  if (scheme === "file" || scheme === "git") return undefined;
  try {
    return new URL(remote.replace(/^[^:]+:/, "https:")).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * Why `branch` cannot be a branch name, or undefined: it is put into `refs/heads/<branch>` refspecs, where
 * a `:` would name a second ref to write (the rules of `git check-ref-format`, written out).
 */
export function branchProblem(branch: string): string | undefined {
  if (branch === "" || branch.startsWith("-")) return 'empty or starting with "-"';
  if (/[\0-\x20\x7f~^:?*[\\]/.test(branch)) return "contains a space, a control character or one of ~^:?*[\\";
  // `@` alone is a valid ref name but means HEAD to every git command; `git branch @` refuses it too.
  if (/\.\.|@\{|\/\/|^\/|\/$|\.$|\.lock(\/|$)|(^|\/)\./.test(branch) || branch === "@")
    return "is not a valid ref name (see git check-ref-format)";
  return undefined;
}
