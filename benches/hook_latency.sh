#!/usr/bin/env bash
# Latency of `skein hook` for an incremental Stop on a large session, process start to exit.
#
#   benches/hook_latency.sh /path/to/skein [runs=50] [size_mb=100]
#
# Builds a synthetic Claude Code session of about size_mb MB in a temp dir, points HOME (and
# CLAUDE_CONFIG_DIR, XDG_CONFIG_HOME, XDG_STATE_HOME) into that dir so nothing real is touched,
# opens a request (UserPromptSubmit), runs one full Stop (first sight of the transcript, timed
# separately), then `runs` times: append one small turn to the transcript (untimed) and time
# `skein hook < stop.json`. Prints p50 / p90 / max in milliseconds. Goal: p50 < 15 ms.
#
# SKEIN_BENCH_STRESS=1 times the hook runtime alone through the crate's test helper instead:
#   cargo build --release -p skein-hook --bin skein-hook-stress
#   SKEIN_BENCH_STRESS=1 benches/hook_latency.sh target/release/skein-hook-stress
# SKEIN_BENCH_KEEP=1 keeps the temp dir (session, state, logs) for inspection.
# SKEIN_BENCH_CONFIG='redact = false' writes that TOML as the user config (skein's defaults
# otherwise: Stop runs `snapshot`, `archive` and `index`, redaction on).
# The catalog (`<state>/catalog.db`) is brought up to date with `skein index` before the
# timed runs (as a user's catalog would be), so each Stop's `index` pass only reads the new
# turn; the first Stop's `index` pass reads at most 4 MiB (`[pass.index] max_bytes`).
# SKEIN_BENCH_NO_INDEX_FIRST=1 skips that, timing the catch-up instead.
#
# Then, per event kind, p50 / p90 over `runs` runs (not with SKEIN_BENCH_STRESS):
# * PreToolUse without passes, and with the opt-in `loop-guard` (a new input each time, so
#   nothing is refused): the difference is what the guard adds to every tool call (goal < 5 ms);
# * SubagentStop of a new agent (a 60-line agent transcript each time: extract, archive, index);
# * Stop inside a long request: a second session whose request opened when its transcript was
#   empty, so the whole session (size_mb) is the request (indexed before the timed runs, as the
#   first session is).
set -euo pipefail

bin=${1:?usage: hook_latency.sh /path/to/skein [runs] [size_mb]}
runs=${2:-50}
size_mb=${3:-100}
[[ -x $bin ]] || { echo "not executable: $bin" >&2; exit 64; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
(( BASH_VERSINFO[0] >= 5 )) || { echo "needs bash >= 5 (EPOCHREALTIME)" >&2; exit 64; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/skein-hook-bench.XXXXXX")
trap '[[ -n ${SKEIN_BENCH_KEEP:-} ]] || rm -rf "$tmp"' EXIT
export HOME=$tmp/home
export CLAUDE_CONFIG_DIR=$HOME/.claude
export XDG_CONFIG_HOME=$HOME/.config
export XDG_STATE_HOME=$HOME/.local/state
projects=$CLAUDE_CONFIG_DIR/projects
state=$XDG_STATE_HOME/skein
sid=3f0c5d2e-8a1b-4c7d-9e2f-0a1b2c3d4e5f
transcript=$projects/-w/$sid.jsonl
mkdir -p "$projects/-w" "$state" "$XDG_CONFIG_HOME/skein" "$tmp/w"
if [[ -n ${SKEIN_BENCH_CONFIG:-} ]]; then
  printf '%s\n' "$SKEIN_BENCH_CONFIG" > "$XDG_CONFIG_HOME/skein/config.toml"
fi

# --- synthetic session: user/assistant turns with tool calls, results and todo updates -------
echo "building a ${size_mb} MB session..." >&2
awk -v target=$((size_mb * 1024 * 1024)) -v sid="$sid" '
BEGIN {
  pad = "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. "
  body = ""; for (i = 0; i < 6; i++) body = body pad
  big = ""; for (i = 0; i < 200; i++) big = big pad
  parent = "null"; n = 0; bytes = 0
  while (bytes < target) {
    n++
    u = sprintf("u%08d-0000-4000-8000-000000000000", n)
    a = sprintf("a%08d-0000-4000-8000-000000000000", n)
    r = sprintf("r%08d-0000-4000-8000-000000000000", n)
    f = sprintf("f%08d-0000-4000-8000-000000000000", n)
    ts = sprintf("2026-05-01T10:%02d:%02d.000Z", (n / 60) % 60, n % 60)
    line[1] = sprintf("{\"type\":\"user\",\"uuid\":\"%s\",\"parentUuid\":%s,\"isSidechain\":false,\"sessionId\":\"%s\",\"cwd\":\"/w\",\"timestamp\":\"%s\",\"message\":{\"role\":\"user\",\"content\":\"Step %d: %s\"}}", u, parent, sid, ts, n, body)
    line[2] = sprintf("{\"type\":\"assistant\",\"uuid\":\"%s\",\"parentUuid\":\"%s\",\"isSidechain\":false,\"sessionId\":\"%s\",\"timestamp\":\"%s\",\"requestId\":\"req_%d\",\"message\":{\"id\":\"msg_%d\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-opus-4-7\",\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_%d\",\"name\":\"Bash\",\"input\":{\"command\":\"cargo test -p x\"}}],\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":3,\"output_tokens\":120,\"cache_read_input_tokens\":51230}}}", a, u, sid, ts, n, n, n)
    # (concatenated, not sprintf: mawk caps sprintf results at 8 KiB)
    line[3] = sprintf("{\"type\":\"user\",\"uuid\":\"%s\",\"parentUuid\":\"%s\",\"isSidechain\":false,\"sessionId\":\"%s\",\"timestamp\":\"%s\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_%d\",\"content\":\"", r, a, sid, ts, n) (n % 4 == 0 ? big : body) "\"}]}}"
    line[4] = sprintf("{\"type\":\"assistant\",\"uuid\":\"%s\",\"parentUuid\":\"%s\",\"isSidechain\":false,\"sessionId\":\"%s\",\"timestamp\":\"%s\",\"message\":{\"id\":\"msg_f%d\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-opus-4-7\",\"content\":[{\"type\":\"text\",\"text\":\"Done with step %d. %s\"}],\"stop_reason\":\"end_turn\",\"usage\":{\"input_tokens\":3,\"output_tokens\":80}}}", f, r, sid, ts, n, n, body)
    for (i = 1; i <= 4; i++) { print line[i]; bytes += length(line[i]) + 1 }
    if (n % 50 == 0) {
      t = sprintf("{\"type\":\"assistant\",\"uuid\":\"t%08d\",\"parentUuid\":\"%s\",\"sessionId\":\"%s\",\"message\":{\"id\":\"msg_t%d\",\"role\":\"assistant\",\"model\":\"claude-opus-4-7\",\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_t%d\",\"name\":\"TodoWrite\",\"input\":{\"todos\":[{\"content\":\"Step %d\",\"status\":\"completed\",\"activeForm\":\"Doing %d\"},{\"content\":\"Step %d\",\"status\":\"in_progress\",\"activeForm\":\"Doing %d\"}]}}]}}", n, f, sid, n, n, n, n, n + 1, n + 1)
      print t; bytes += length(t) + 1
    }
    parent = "\"" f "\""
  }
  print parent > "/dev/stderr"
}' > "$transcript" 2> "$tmp/last_parent"
printf '%s\n' "$(wc -c < "$transcript" | awk '{printf "session: %.1f MB", $1 / 1048576}')" >&2

event() { # event <name> <extra json fields>
  printf '{"session_id":"%s","transcript_path":"%s","cwd":"%s/w","permission_mode":"default","hook_event_name":"%s"%s}\n' \
    "$sid" "$transcript" "$tmp" "$1" "$2"
}
event UserPromptSubmit ',"prompt":"Keep going with the next step.","prompt_id":"6b1e0a52-77c1-4f3e-9d2a-5b8c9d0e1f2a"' > "$tmp/prompt.json"
event Stop ',"stop_hook_active":false,"last_assistant_message":"Done. Tests pass.","background_tasks":[],"session_crons":[],"effort":{"level":"high"}' > "$tmp/stop.json"

hook() { # hook <event.json> -> runs the hook with the event on stdin
  if [[ ${SKEIN_BENCH_STRESS:-0} == 1 ]]; then
    "$bin" "$state" "$projects" - 1 < "$1"
  else
    (cd "$tmp/w" && "$bin" hook < "$1")
  fi
}

failures=0
timed() { # timed <event.json> -> prints elapsed ms
  local out start end status=0
  start=$EPOCHREALTIME
  out=$(hook "$1" 2>> "$tmp/stderr") || status=$?
  end=$EPOCHREALTIME
  if (( status != 0 )) || [[ -n $out ]]; then failures=$((failures + 1)); fi
  awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f\n", (e - s) * 1000 }'
}

parent=$(tr -d '"' < "$tmp/last_parent")
turn() { # append one small turn (untimed)
  local k=$1
  printf '{"type":"user","uuid":"bu%06d","parentUuid":"%s","sessionId":"%s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_b%d","content":"ok"}]}}\n' "$k" "$parent" "$sid" "$k"
  printf '{"type":"assistant","uuid":"ba%06d","parentUuid":"bu%06d","sessionId":"%s","message":{"id":"msg_b%d","role":"assistant","model":"claude-opus-4-7","content":[{"type":"text","text":"Bench turn %d done."}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":9}}}\n' "$k" "$k" "$sid" "$k" "$k"
  parent=$(printf 'ba%06d' "$k")
} >> "$transcript"

echo "open request: $(timed "$tmp/prompt.json") ms" >&2
echo "first Stop (full pass over the session): $(timed "$tmp/stop.json") ms" >&2
if [[ ${SKEIN_BENCH_STRESS:-0} != 1 && -z ${SKEIN_BENCH_NO_INDEX_FIRST:-} ]]; then
  s0=$EPOCHREALTIME
  "$bin" index -q "$projects"
  awk -v s="$s0" -v e="$EPOCHREALTIME" 'BEGIN { printf "skein index of the session: %.0f ms\n", (e - s) * 1000 }' >&2
fi
: > "$tmp/times"
for ((k = 1; k <= runs; k++)); do
  turn "$k"
  timed "$tmp/stop.json" >> "$tmp/times"
done

report() { # report <label> <times file> [goal ms]
  sort -n "$2" | awk -v label="$1" -v fails="$failures" -v goal="${3:-15}" '
    { t[NR] = $1 }
    END {
      p50 = t[int((NR - 1) * 0.5) + 1]; p90 = t[int((NR - 1) * 0.9) + 1]
      printf "%s, %d runs: p50 %.2f ms  p90 %.2f ms  max %.2f ms\n", label, NR, p50, p90, t[NR]
      if (fails > 0) printf "WARNING: %d run(s) exited non-zero or printed on stdout\n", fails
      if (p50 >= goal) printf "WARNING: p50 above the %s ms goal\n", goal
    }'
}
report "incremental Stop" "$tmp/times"

if [[ ${SKEIN_BENCH_STRESS:-0} != 1 ]]; then
  # PreToolUse, without and with the loop guard (an explicit config layer adds it).
  printf '[events]\nPreToolUse = ["loop-guard"]\n' > "$tmp/guard.toml"
  : > "$tmp/pre_plain"; : > "$tmp/pre_guard"
  for ((k = 1; k <= runs; k++)); do
    event PreToolUse ",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls $k\"},\"tool_use_id\":\"toolu_p$k\"" > "$tmp/pre.json"
    timed "$tmp/pre.json" >> "$tmp/pre_plain"
    start=$EPOCHREALTIME
    out=$(cd "$tmp/w" && "$bin" hook --config "$tmp/guard.toml" < "$tmp/pre.json") || failures=$((failures + 1))
    [[ -z $out ]] || failures=$((failures + 1))
    awk -v s="$start" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", (e - s) * 1000 }' >> "$tmp/pre_guard"
  done
  report "PreToolUse, no passes" "$tmp/pre_plain"
  report "PreToolUse, loop-guard" "$tmp/pre_guard"

  # SubagentStop of a new agent each time.
  agents=$projects/-w/$sid/subagents
  mkdir -p "$agents"
  : > "$tmp/sub"
  for ((k = 1; k <= runs; k++)); do
    aid=$(printf 'ab%014d' "$k")
    for ((j = 1; j <= 30; j++)); do
      printf '{"type":"user","uuid":"%s-u%d","parentUuid":null,"isSidechain":true,"agentId":"%s","sessionId":"%s","timestamp":"2026-05-01T11:00:%02d.000Z","message":{"role":"user","content":"look at part %d"}}\n' "$aid" "$j" "$aid" "$sid" "$j" "$j"
      printf '{"type":"assistant","uuid":"%s-a%d","parentUuid":"%s-u%d","isSidechain":true,"agentId":"%s","sessionId":"%s","timestamp":"2026-05-01T11:00:%02d.500Z","message":{"id":"msg_%s_%d","role":"assistant","model":"claude-opus-4-7","content":[{"type":"text","text":"Part %d is fine."}],"usage":{"input_tokens":3,"output_tokens":9}}}\n' "$aid" "$j" "$aid" "$j" "$aid" "$sid" "$j" "$aid" "$j" "$j"
    done > "$agents/agent-$aid.jsonl"
    event SubagentStop ",\"stop_hook_active\":false,\"agent_id\":\"$aid\",\"agent_type\":\"Explore\",\"agent_transcript_path\":\"$agents/agent-$aid.jsonl\",\"last_assistant_message\":\"Done.\\n<context>\\nPart $k is fine.\\n</context>\"" > "$tmp/sub.json"
    timed "$tmp/sub.json" >> "$tmp/sub"
  done
  report "SubagentStop of a new agent" "$tmp/sub"

  # Stop inside a long request: session 2's request opened before its transcript existed.
  sid2=4a1d6e3f-9b2c-4d8e-af30-1b2c3d4e5f60
  transcript2=$projects/-w/$sid2.jsonl
  printf '{"session_id":"%s","transcript_path":"%s","cwd":"%s/w","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":"Step 1: lorem ipsum"}\n' "$sid2" "$transcript2" "$tmp" > "$tmp/prompt2.json"
  hook "$tmp/prompt2.json" > /dev/null
  sed "s/$sid/$sid2/g" "$transcript" > "$transcript2"
  sed "s/$sid/$sid2/g; s#$transcript#$transcript2#" "$tmp/stop.json" > "$tmp/stop2.json"
  echo "long request, first Stop: $(timed "$tmp/stop2.json") ms" >&2
  # As for the first session, the catalog is brought up to date first, so the timed Stops'
  # `index` pass reads only their turn (not a 4 MiB slice of a 100 MB backlog each time).
  [[ -n ${SKEIN_BENCH_NO_INDEX_FIRST:-} ]] || "$bin" index -q "$projects"
  saved_transcript=$transcript; transcript=$transcript2
  : > "$tmp/long"
  for ((k = 1; k <= runs; k++)); do
    turn "$((100000 + k))"
    timed "$tmp/stop2.json" >> "$tmp/long"
  done
  transcript=$saved_transcript
  report "Stop inside a ${size_mb} MB request" "$tmp/long"
fi
if [[ -s $state/logs/hook.log ]]; then
  echo "hook log (last 5 lines):" >&2
  tail -n 5 "$state/logs/hook.log" >&2
fi
