# The command hook's fast path (docs/decisions/0013-command-hook-fast-path.md), run by /bin/sh as
#   sh harness-hook.sh NODE BIN hook NAME --harness H --observer-token F --ledger-token F --socket S
#                      [--fail closed|open] [--timeout MS]
# POSIX sh and curl post the agent's payload to the daemon's hook endpoint on its Unix socket and print
# the answer: no Node start when all is well. Whenever anything is not plainly well (no curl, a waiting
# spool, a token file Node would refuse, the daemon down, slow or answering anything but a clean 200),
# the Node forwarder (`NODE BIN hook …`, hook-forwarder.ts) takes the call with the same call nonce and
# the rest of the time, so order, spooling, fail modes and messages stay the forwarder's. Tokens reach
# curl in a config on a descriptor, never on a command line. The script only reads its arguments and the
# token files; nothing it reads is evaluated.
LC_ALL=C
# Never exit 2 (Claude Code would block the tool with no reason): a call that cannot run says why.
[ $# -ge 2 ] || {
  echo "harness hook: usage: sh harness-hook.sh NODE BIN hook NAME ..." >&2
  exit 1
}
node=$1
bin=$2
shift 2

# Before stdin is read: the forwarder gets the call as the agent gave it.
forward() {
  exec "$node" "$bin" "$@"
}

[ "${1-}" = hook ] || forward "$@"
name=${2-}
case $name in '' | *[!a-z0-9-]*) forward "$@" ;; esac
harness='' observer='' ledger='' socket='' fail='' timeout=5000
i=3
while [ "$i" -le $# ]; do
  eval "flag=\${$i}"
  i=$((i + 1))
  [ "$i" -le $# ] || forward "$@"
  eval "value=\${$i}"
  i=$((i + 1))
  case $flag in
  --harness) harness=$value ;;
  --observer-token) observer=$value ;;
  --ledger-token) ledger=$value ;;
  --socket) socket=$value ;;
  --fail) fail=$value ;;
  --timeout) timeout=$value ;;
  *) forward "$@" ;; # a payload argument, --config, or a flag of a later forwarder
  esac
done
case $harness in '' | [!A-Za-z0-9]* | *[!A-Za-z0-9._-]*) forward "$@" ;; esac
case $fail in '') query='' ;; closed | open) query="&fail=$fail" ;; *) forward "$@" ;; esac
case $timeout in '' | *[!0-9]* | ?????????*) forward "$@" ;; esac
[ "$timeout" -ge 2 ] || forward "$@"
case $socket in /*) ;; *) forward "$@" ;; esac
case $socket$observer$ledger in *[\"\\]* | *'
'*) forward "$@" ;; esac
command -v curl >/dev/null 2>&1 || forward "$@"

# A call of any session waiting in the spool: the forwarder delivers them first, in order.
case ${XDG_STATE_HOME-} in
/*) state=$XDG_STATE_HOME ;;
*) case ${HOME-} in /*) state=$HOME/.local/state ;; *) forward "$@" ;; esac ;;
esac
for entry in "$state"/harness/agents/spool/*.json; do
  [ -e "$entry" ] && forward "$@"
  break
done

# The token files as token-file.ts reads them: regular files, at most 4096 bytes, private to the
# user, one printable token each. Anything else, the forwarder refuses with its own words.
odd=$(find -H "$observer" "$ledger" -prune \( ! -type f -o -size +8 -o -perm -040 -o -perm -020 \
  -o -perm -010 -o -perm -004 -o -perm -002 -o -perm -001 \) -print 2>&1) || forward "$@"
[ -z "$odd" ] || forward "$@"
{ read -r obs_token && ! read -r more; } <"$observer" || forward "$@"
{ read -r led_token && ! read -r more; } <"$ledger" || forward "$@"
case $obs_token$led_token in *[!!-~]* | *[\"\\]*) forward "$@" ;; esac
[ -n "$obs_token" ] && [ -n "$led_token" ] || forward "$@"

# The call's nonce: its idempotency key where the payload names no call (hook-key.ts), shared with the
# forwarder if it takes over, so a call the daemon admitted but answered too late is admitted once.
if [ -r /proc/sys/kernel/random/uuid ]; then
  read -r nonce </proc/sys/kernel/random/uuid
else
  nonce=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
fi
case $nonce in ???????????????? | ????????????????*) ;; *) forward "$@" ;; esac
case $nonce in *[!0-9a-f-]*) forward "$@" ;; esac

# The payload, one byte past the bound at most (MAX_HOOK_PAYLOAD_BYTES, hook-limits.ts); the `x` keeps
# its trailing newlines.
payload=$(head -c 8388609 && printf x) || payload=x
payload=${payload%x}
half=$((timeout / 2))

# From here the payload is read: the forwarder gets it back on stdin, with the nonce and the time left.
takeover() {
  printf '%s' "$payload" | "$node" "$bin" "$@" --call "$nonce" --timeout $((timeout - half))
  exit $?
}
[ ${#payload} -le 8388608 ] || takeover "$@"

ms=$((half % 1000))
case $ms in ?) ms=00$ms ;; ??) ms=0$ms ;; esac
post() {
  printf '%s' "$payload" | curl --config /dev/fd/3 3<<EOF
silent
unix-socket = "$socket"
max-time = $((half / 1000)).$ms
dump-header = "-"
output = "-"
data-binary = "@-"
header = "Content-Type: application/json"
header = "Expect:"
header = "Authorization: Bearer $obs_token"
header = "x-harness-ledger-token: $led_token"
header = "x-harness-hook-call: $nonce"
header = "x-harness-version: 0.1.0"
url = "http://localhost/hooks/$name?harness=$harness$query"
EOF
}
reply=$(post && printf x) || takeover "$@"
reply=${reply%x}

# The header block ends at the first empty line; each of its lines ends in a CR, which `?` matches.
nl='
'
head=${reply%%"$nl"?"$nl"*}
[ "$head" != "$reply" ] || takeover "$@"
body=${reply#*"$nl"?"$nl"}
case $head in "HTTP/1.1 200 "*) ;; *) takeover "$@" ;; esac
case $head in *"$nl"[Xx]-[Hh][Aa][Rr][Nn][Ee][Ss][Ss]-[Rr][Oo][Ww]:" dropped"?*) takeover "$@" ;; esac
case $head in
*"$nl"[Xx]-[Hh][Aa][Rr][Nn][Ee][Ss][Ss]-[Nn][Oo][Tt][Ee]:" "*)
  note=${head#*"$nl"[Xx]-[Hh][Aa][Rr][Nn][Ee][Ss][Ss]-[Nn][Oo][Tt][Ee]: }
  note=${note%%"$nl"*}
  printf 'harness hook: %s\n' "${note%?}" >&2
  ;;
esac
printf '%s' "$body"
exit 0
