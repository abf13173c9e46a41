#!/usr/bin/env bash
# `skein statusline` against `ccusage statusline` (20.0.24) on the same ~1 GB tree, each answer
# fresh: before every run one request (today, Opus 4.7, 1,000 input + 500 output tokens) is
# appended to one session's transcript, and both tools must count it.
#
#   benches/statusline_compare.sh /path/to/skein [TREE] [skein_runs=30] [ccusage_runs=5]
#
# TREE is a tree built by `python3 ../shared/tools/make_bench_tree.py TREE 20` (default
# $SKEIN_BENCH_TREE, else /work/bench/tree20). It is copied to a temp dir as `cfg/projects`
# (appends go to the copy), indexed once (`skein index`: the warm catalog the status line
# reads), then:
#
#  1. skein: append, `skein statusline` with Claude Code's JSON on stdin; wall time of each run
#     (p50, p90), CPU time and peak RSS (VmHWM, from /usr/bin/time) of the last run.
#  2. ccusage (CCUSAGE=path, default /work/bench/ccusage/node_modules/.bin/ccusage): append,
#     `ccusage statusline --no-cache --offline` with the same JSON (its fresh answer).
#  3. After a last append both print today's cost ({today} for skein, the "today" figure of
#     ccusage's line); they must be equal. The ratio of the p50s is the goal (>= 100x).
#
# HOME, XDG_* and CLAUDE_CONFIG_DIR point into the temp dir; both tools use UTC days (TZ=UTC).
# Needs bash >= 5, python3, GNU time.
set -euo pipefail
skein=${1:?usage: statusline_compare.sh /path/to/skein [TREE] [skein_runs] [ccusage_runs]}
tree=${2:-${SKEIN_BENCH_TREE:-/work/bench/tree20}}
runs=${3:-30}
cruns=${4:-5}
skein=$(cd "$(dirname "$skein")" && pwd)/$(basename "$skein")
[[ -d $tree ]] || { echo "no tree at $tree (build it with make_bench_tree.py)" >&2; exit 64; }
ccusage=${CCUSAGE:-/work/bench/ccusage/node_modules/.bin/ccusage}
work=$(mktemp -d "${TMPDIR:-/tmp}/skein-statusline-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export HOME=$work/home XDG_STATE_HOME=$work/state XDG_CONFIG_HOME=$work/config TZ=UTC NO_COLOR=1
export CLAUDE_CONFIG_DIR=$work/cfg
mkdir -p "$HOME" "$work/cfg"
cp -r "$tree" "$work/cfg/projects"
projects=$work/cfg/projects
db=$work/catalog.db
echo "tree: $(find "$projects" -name '*.jsonl' | wc -l) files, $(du -sb "$projects" | cut -f1) bytes; cores: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"

s=$EPOCHREALTIME
"$skein" index -q --catalog "$db" "$projects"
echo "skein index (cold, once): $(python3 -c "print(f'{($EPOCHREALTIME-$s):.1f}')") s"

# The session the status line is for: the largest main transcript.
transcript=$(find "$projects" -name '*.jsonl' -not -path '*/subagents/*' -not -name 'agent-*' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)
session=$(basename "$transcript" .jsonl)
echo "session: $session ($(stat -c %s "$transcript") bytes)"
input=$work/input.json
python3 - "$session" "$transcript" > "$input" <<'PY'
import json, sys
print(json.dumps({"hook_event_name": "Status", "session_id": sys.argv[1], "transcript_path": sys.argv[2],
                  "cwd": "/home/me/app", "model": {"id": "claude-opus-4-7", "display_name": "Opus 4.7"},
                  "workspace": {"current_dir": "/home/me/app", "project_dir": "/home/me/app"},
                  "version": "2.1.100", "cost": {"total_cost_usd": 1.23}}))
PY

n=0
append() { # one new request, now, with unique ids
  n=$((n + 1))
  python3 - "$transcript" "$session" "$n" <<'PY'
import datetime, json, sys, uuid
path, session, n = sys.argv[1], sys.argv[2], sys.argv[3]
now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
rec = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/me/app",
       "sessionId": session, "version": "2.1.100", "type": "assistant", "requestId": f"req_bench_{uuid.uuid4().hex}",
       "message": {"id": f"msg_bench_{uuid.uuid4().hex}", "type": "message", "role": "assistant",
                   "model": "claude-opus-4-7", "content": [{"type": "text", "text": f"bench {n}"}],
                   "usage": {"input_tokens": 1000, "output_tokens": 500, "cache_creation_input_tokens": 0,
                             "cache_read_input_tokens": 0}},
       "uuid": str(uuid.uuid4()), "timestamp": now}
with open(path, "a") as f:
    f.write(json.dumps(rec, separators=(",", ":")) + "\n")
PY
}

pct() { # pct P numbers... -> the P-th percentile (nearest rank)
  local p=$1; shift
  printf '%s\n' "$@" | sort -n | awk -v p="$p" '{a[NR]=$1} END {i=int((NR*p+99)/100); if (i<1) i=1; print a[i]}'
}

skein_line() { "$skein" statusline --catalog "$db" --timezone UTC "$@" < "$input"; }

# 1. skein
times=()
for _ in $(seq "$runs"); do
  append
  s=$EPOCHREALTIME
  skein_line > /dev/null
  e=$EPOCHREALTIME
  times+=("$(python3 -c "print(f'{($e-$s)*1000:.2f}')")")
done
append
/usr/bin/time -f '%e %U %S %M' -o "$work/time" "$skein" statusline --catalog "$db" --timezone UTC < "$input" > "$work/skein.line"
read -r wall user sys rss < "$work/time"
sp50=$(pct 50 "${times[@]}")
echo
echo "skein statusline, $runs runs each after an append: p50 ${sp50} ms, p90 $(pct 90 "${times[@]}") ms"
echo "  one more run under GNU time: wall ${wall} s, CPU ${user} s user + ${sys} s sys, peak RSS $((rss / 1024)) MB"
echo "  line: $(cat "$work/skein.line")"

# 2. ccusage
if [[ -x $ccusage ]]; then
  ctimes=()
  for _ in $(seq "$cruns"); do
    append
    s=$EPOCHREALTIME
    "$ccusage" statusline --no-cache --offline --timezone UTC < "$input" > /dev/null 2>&1 || true
    e=$EPOCHREALTIME
    ctimes+=("$(python3 -c "print(f'{($e-$s)*1000:.2f}')")")
  done
  cp50=$(pct 50 "${ctimes[@]}")
  echo
  echo "ccusage statusline --no-cache, $cruns runs each after an append: p50 ${cp50} ms"
  # 3. Same today's cost after one more append.
  append
  theirs=$("$ccusage" statusline --no-cache --offline --timezone UTC < "$input" 2>/dev/null || true)
  ours=$(skein_line --format '{today}')
  theirs_today=$(grep -oE '\$[0-9.,]+ today' <<< "$theirs" | head -1 | cut -d' ' -f1)
  echo "  line: $theirs"
  echo
  echo "today's cost after $n appended requests: skein $ours, ccusage ${theirs_today:-?} ($( [[ $ours == "$theirs_today" ]] && echo equal || echo DIFFER))"
  printf 'ratio: skein statusline is %.0fx faster than ccusage statusline --no-cache (p50; goal >= 100x)\n' \
    "$(python3 -c "print($cp50 / $sp50)")"
else
  echo "ccusage not found at $ccusage (set CCUSAGE): skein only"
fi
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
