#!/usr/bin/env bash
# `harness tui` left open on the demo's fleet for MINUTES (default 60): its resident memory sampled every
# minute, while the view is switched and the feed scrolled as an operator would. The TUI's feed is a
# bounded ring and its fetches are paged, so its memory should level off after the first minutes; the
# summary compares the median of the first and last ten samples and fits a slope over the second half.
#
#   npm run -s build && MINUTES=60 bash bench/tui-memory.sh
# (tmux needed; the demo's directory is kept, and named in the first line, for a look afterwards.)
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${MINUTES:-60}
cli="$PWD/dist/shell/cli/bin.cjs"
server="harness-tui-memory-$$"
work=$(mktemp -d)
trap 'tmux -L "$server" kill-server 2>/dev/null || true; kill -INT "$demo_pid" 2>/dev/null || true; wait 2>/dev/null || true' EXIT

# The demo's story, then its fleet left running (a new round of harnesses every ~25 s) until we stop it.
node "$cli" demo --keep-running --keep >"$work/demo.log" 2>&1 &
demo_pid=$!
for _ in $(seq 1 100); do
  dir=$(sed -n 's/^  directory  \(.*\) (kept)$/\1/p' "$work/demo.log")
  [[ -n "$dir" && -S "$dir/run/harness.sock" ]] && break
  sleep 0.2
done
[[ -S "$dir/run/harness.sock" ]] || { echo "the demo's daemon did not start:"; cat "$work/demo.log"; exit 1; }

tmux -L "$server" -f /dev/null new-session -d -s tui -x 160 -y 45 \
  "exec env -i PATH=/usr/bin:/bin TERM=xterm-256color $(printf %q "$(command -v node)") $(printf %q "$cli") tui --config $(printf %q "$dir/config/harness/harness.toml")"
pid=$(tmux -L "$server" display-message -p -t tui '#{pane_pid}')

echo "demo: $dir; harness tui pid $pid; sampling every 60 s for $minutes min (uptime: $(uptime | sed 's/.*load/load/'))"
printf '%6s  %8s  %7s  %7s\n' minute rss_MiB fires rows
samples="$work/samples"
: >"$samples"
for m in $(seq 0 "$minutes"); do
  # Walk every view, move in the feed and come back, as an operator glancing at the console would.
  for key in 2 3 4 5 6 1 j j k k; do tmux -L "$server" send-keys -t tui "$key"; sleep 0.2; done
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
  read -r fires rows < <(node -e '
    const db = new (require("better-sqlite3"))(process.argv[1], { readonly: true });
    const count = (table) => db.prepare(`SELECT count(*) FROM ${table}`).pluck().get();
    console.log(count("rule_fires"), count("rule_journal"));' "$dir/state/harness/harness.db")
  printf '%6d  %8.1f  %7s  %7s\n' "$m" "$((rss / 1024))" "$fires" "$rows"
  echo "$m $rss" >>"$samples"
  [[ "$m" -lt "$minutes" ]] && sleep $((60 - 2))
done

awk -v n="$minutes" '
  { m[NR] = $1; r[NR] = $2 / 1024 }
  function median(from, to,   k, i, j, t, a) {
    k = 0; for (i = from; i <= to; i++) a[++k] = r[i]
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
  }
  END {
    first = median(1, NR < 10 ? NR : 10); last = median(NR > 10 ? NR - 9 : 1, NR)
    h = int(NR / 2) + 1; c = NR - h + 1; sx = sy = sxy = sxx = 0
    for (i = h; i <= NR; i++) { sx += m[i]; sy += r[i]; sxy += m[i] * r[i]; sxx += m[i] * m[i] }
    slope = (c * sxy - sx * sy) / (c * sxx - sx * sx)
    printf "first ten samples median %.1f MiB, last ten %.1f MiB (%+.1f%%); second-half slope %+.3f MiB/min\n",
      first, last, 100 * (last - first) / first, slope
  }' "$samples"
echo "the demo's fleet: $(grep -c ' rule  ' "$work/demo.log") fires narrated, $(grep -c 'warn' "$work/demo.log") warnings; its log: $work/demo.log"
