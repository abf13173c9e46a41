#!/usr/bin/env bash
# `skein usage` against ccusage 20.x: token totals and billing blocks (`skein usage blocks` vs
# `ccusage blocks`) per corpus project folder, then totals and speed on ~1 GB (the corpus copied
# COPIES times; COPIES=0 stops after the per-folder checks). Prints both tools' totals and the
# speed ratio.
#
#   benches/ccusage_compare.sh [CORPUS_DIR] [COPIES]
#
# CORPUS_DIR defaults to $SKEIN_CORPUS or ../shared/corpus beside the checkout; COPIES to 21
# (about 1 GB for the 48 MB corpus). ccusage is run only where installed: $CCUSAGE, else
# `ccusage` on PATH. To install it without touching anything global:
#
#   npm install --prefix /tmp/ccu ccusage@20.0.24     # the npm package ships a native binary
#   CCUSAGE=/tmp/ccu/node_modules/.bin/ccusage benches/ccusage_compare.sh
#
# (ccusage@20 resolves to the newest 20.x; if its platform package `@ccusage/ccusage-<os>-<arch>`
# is missing for that version, pin one that has it, as above.)
#
# Every run points HOME and CLAUDE_CONFIG_DIR into a temp dir: nothing under ~/.claude is read,
# and ccusage runs with --offline (its bundled price snapshot, no network). Both tools group days
# in UTC (`ccusage --timezone UTC`). Timings use hyperfine when present (else the median of 5
# runs), after one warm-up run; wall time is the median, CPU time (user + system) the mean. On a
# shared machine the CPU-time ratio is the steadier figure.
# SKEIN=path/to/skein times that (release) binary instead of building one.
# Needs bash, python3 and cargo.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
src="${1:-${SKEIN_CORPUS:-$here/../shared/corpus}}"
copies="${2:-21}"
[[ -d $src ]] || { echo "corpus not found: $src (give CORPUS_DIR or set SKEIN_CORPUS)" >&2; exit 64; }
src="$(cd "$src" && pwd)"
ccusage="${CCUSAGE:-$(command -v ccusage || true)}"
work="$(mktemp -d "${TMPDIR:-/tmp}/skein-ccusage.XXXXXX")"
trap 'rm -rf "$work"' EXIT

if [[ -n ${SKEIN:-} ]]; then
  skein="$(cd "$(dirname "$SKEIN")" && pwd)/$(basename "$SKEIN")"   # a prebuilt release binary
else
  (cd "$here" && cargo build --release --quiet -p skein)
  skein="$here/target/release/skein"
fi
# From here on, HOME is a scratch dir (cargo above still needed the real one for rustup).
export HOME="$work/home"
mkdir -p "$HOME"
unset CLAUDE_CONFIG_DIR

# The native ccusage binary behind the npm launcher, if any (timed too: no node start-up).
native=""
if [[ -n $ccusage ]]; then
  nm="$(cd "$(dirname "$ccusage")/.." 2>/dev/null && pwd || true)"
  for cand in "$nm"/@ccusage/ccusage-*/bin/ccusage; do
    [[ -x $cand ]] && native="$cand" && break
  done
  echo "ccusage: $ccusage ($("$ccusage" --version 2>/dev/null | head -1))${native:+, native binary $native}"
else
  echo "ccusage: not installed (set CCUSAGE; see the header of this script); skein only"
fi

echo
echo "== 1. Token totals per corpus project folder (input, output, cache write, cache read)"
python3 - "$src" "$work/parity" "$skein" "$ccusage" <<'PY'
import json, os, shutil, subprocess, sys

src, work, skein, ccusage = sys.argv[1:5]
files = []
for root, _dirs, names in os.walk(src):
    files += [os.path.join(root, n) for n in names if n.endswith(".jsonl")]
files.sort()
folders = sorted({os.path.dirname(f) for f in files if "/subagents/" not in f})

def owner(path):
    return max((d for d in folders if path.startswith(d + "/")), key=len, default=None)

owned = {d: [] for d in folders}
for f in files:
    owned[owner(f)].append(f)
    meta = f[: -len(".jsonl")] + ".meta.json"
    if os.path.exists(meta):
        owned[owner(f)].append(meta)

def skein_totals(projects):
    out = subprocess.run([skein, "usage", "--format", "jsonl", "-q", projects],
                         capture_output=True, text=True, check=True).stdout
    t = json.loads(out.strip().splitlines()[-1])
    return [t[k] for k in ("input_tokens", "output_tokens",
                           "cache_creation_input_tokens", "cache_read_input_tokens")]

def ccusage_totals(cfg):
    env = dict(os.environ, CLAUDE_CONFIG_DIR=cfg)
    out = subprocess.run([ccusage, "claude", "daily", "--json", "--offline", "--timezone", "UTC"],
                         capture_output=True, text=True, env=env, check=True).stdout
    t = json.loads(out)["totals"]
    return [t[k] for k in ("inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens")]

def skein_blocks(projects):
    out = subprocess.run([skein, "usage", "blocks", "--format", "jsonl", "-q", projects],
                         capture_output=True, text=True, check=True).stdout
    rows = [json.loads(l) for l in out.strip().splitlines()[:-1]]
    return [(r["start"][:19], r["input_tokens"], r["output_tokens"],
             r["cache_creation_input_tokens"], r["cache_read_input_tokens"], round(r["cost_usd"], 2))
            for r in rows]

def ccusage_blocks(cfg):
    env = dict(os.environ, CLAUDE_CONFIG_DIR=cfg)
    out = subprocess.run([ccusage, "blocks", "--json", "--offline", "--mode", "calculate",
                          "--timezone", "UTC"],
                         capture_output=True, text=True, env=env, check=True).stdout
    blocks = json.loads(out)["blocks"] if out.strip() else []
    return [(b["startTime"][:19], b["tokenCounts"]["inputTokens"], b["tokenCounts"]["outputTokens"],
             b["tokenCounts"]["cacheCreationInputTokens"], b["tokenCounts"]["cacheReadInputTokens"],
             round(b["costUSD"], 2))
            for b in blocks if not b["isGap"]]

same = differ = bsame = bdiffer = 0
for i, d in enumerate(folders):
    cfg = os.path.join(work, str(i))
    proj = os.path.join(cfg, "projects", "p")
    for f in owned[d]:
        dst = os.path.join(proj, os.path.relpath(f, d))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(f, dst)
    ours = skein_totals(proj)
    name = os.path.relpath(d, src)
    if ccusage:
        theirs = ccusage_totals(cfg)
        ok = ours == theirs
        same += ok
        differ += not ok
        print(f"{'equal ' if ok else 'DIFFER'}  {name}: skein {ours}" + ("" if ok else f"  ccusage {theirs}"))
        ob, tb = skein_blocks(proj), ccusage_blocks(cfg)
        bok = ob == tb
        bsame += bok
        bdiffer += not bok
        print(f"  blocks {'equal ' if bok else 'DIFFER'}: {len(ob)} blocks" + ("" if bok else f", ccusage {len(tb)}"))
        if not bok:
            for row in sorted(set(ob) ^ set(tb)):
                print(f"    {'skein  ' if row in ob else 'ccusage'} {row}")
    else:
        print(f"        {name}: skein {ours}")
    shutil.rmtree(cfg)
if ccusage:
    print(f"\n{same} folders equal, {differ} differ (see docs/reports/usage.md for why)")
    print(f"blocks (start, four counters, cost to the cent): {bsame} folders equal, {bdiffer} differ")
PY

[[ $copies -gt 0 ]] || exit 0   # COPIES=0: the parity checks only
echo
echo "== 2. ~1 GB: the corpus copied $copies times"
big="$work/big"
for i in $(seq 1 "$copies"); do
  mkdir -p "$big/projects/c$i"
  cp -r "$src"/. "$big/projects/c$i/"
done
chmod -R u+w "$big"
bytes=$(find "$big" -name '*.jsonl' -print0 | xargs -0 cat | wc -c)
nfiles=$(find "$big" -name '*.jsonl' | wc -l)
echo "input: $nfiles files, $bytes bytes"
find "$big" -name '*.jsonl' -print0 | xargs -0 cat > /dev/null   # warm the page cache

totals_py='import json,sys
d=json.load(sys.stdin) if sys.argv[1]=="ccusage" else json.loads(sys.stdin.read().strip().splitlines()[-1])
if sys.argv[1]=="ccusage":
    t=d["totals"]; v=[t["inputTokens"],t["outputTokens"],t["cacheCreationTokens"],t["cacheReadTokens"],t["totalTokens"],t["totalCost"]]
else:
    t=d; v=[t["input_tokens"],t["output_tokens"],t["cache_creation_input_tokens"],t["cache_read_input_tokens"],t["total_tokens"],t["cost_usd"]]
print("input %d  output %d  cache write %d  cache read %d  total %d  cost $%.2f" % tuple(v))'

skein_cmd=("$skein" usage -q --format jsonl "$big/projects")
printf '%-10s %s\n' skein "$("${skein_cmd[@]}" | python3 -c "$totals_py" skein)"
if [[ -n $ccusage ]]; then
  ccu_cmd=(env CLAUDE_CONFIG_DIR="$big" "$ccusage" claude daily --json --offline --timezone UTC)
  printf '%-10s %s\n' ccusage "$("${ccu_cmd[@]}" | python3 -c "$totals_py" ccusage)"
fi

time_cmd() { # prints "WALL CPU": median wall seconds and mean user+system seconds of "$@"
  if command -v hyperfine > /dev/null; then
    hyperfine --style none --warmup 1 --runs 5 --export-json "$work/h.json" -- "$(printf '%q ' "$@")" > /dev/null 2>&1
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.3f %.3f" % (r["median"], r["user"] + r["system"]))' "$work/h.json"
  else
    "$@" > /dev/null 2>&1 || true
    local t=() c=()
    for _ in 1 2 3 4 5; do
      local s e u0 u1
      u0=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
      s=$(date +%s.%N); "$@" > /dev/null 2>&1 || true; e=$(date +%s.%N)
      u1=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
      t+=("$(echo "$e - $s" | bc -l)")
      c+=("$(echo "($u1 - $u0) / $(getconf CLK_TCK)" | bc -l)")
    done
    printf '%s %s\n' "$(printf '%s\n' "${t[@]}" | sort -n | sed -n 3p)" \
      "$(printf '%s\n' "${c[@]}" | awk '{s += $1} END {print s / NR}')"
  fi
}

echo
declare -A secs cpu
run() { # name, command...
  local name="$1"; shift
  read -r secs[$name] cpu[$name] < <(time_cmd "$@")
}
run skein "${skein_cmd[@]}"
run skein_1thread "$skein" usage -q -j 1 --format jsonl "$big/projects"
if [[ -n $ccusage ]]; then
  run ccusage "${ccu_cmd[@]}"
  if [[ -n $native ]]; then
    run ccusage_native env CLAUDE_CONFIG_DIR="$big" "$native" claude daily --json --offline --timezone UTC
  fi
fi
printf '%-16s %9s %9s %10s %9s %10s\n' command wall_s MB/s "x skein" cpu_s "x skein"
for k in skein skein_1thread ccusage ccusage_native; do
  [[ -n ${secs[$k]:-} ]] || continue
  s=${secs[$k]} c=${cpu[$k]}
  printf '%-16s %9.3f %9.0f %10.2f %9.3f %10.2f\n' "$k" "$s" "$(echo "$bytes / $s / 1000000" | bc -l)" \
    "$(echo "$s / ${secs[skein]}" | bc -l)" "$c" "$(echo "$c / ${cpu[skein]}" | bc -l)"
done
if [[ -n ${secs[ccusage]:-} ]]; then
  k=ccusage; [[ -n ${secs[ccusage_native]:-} ]] && k=ccusage_native
  echo
  printf 'speed ratio: skein usage is %.1fx faster than %s in wall time, %.1fx in CPU time (goal: >= 3x)\n' \
    "$(echo "${secs[$k]} / ${secs[skein]}" | bc -l)" "$k" "$(echo "${cpu[$k]} / ${cpu[skein]}" | bc -l)"
fi
echo "cores: $(nproc), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
