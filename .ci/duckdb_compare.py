"""DuckDB over `skein export parquet`'s dataset against skein's own reports (run by
.ci/duckdb_check.sh on the sample and on the corpus).

usage: duckdb_compare.py DATASET USAGE_JSONL [SESSIONS_JSONL TOOLS_JSONL]

- usage/: row count, the four token sums and the cost equal `skein usage`'s totals (tokens
  exactly, cost to 1e-6 USD);
- sessions/: one group per main session (main transcript and its subagents) for every row of
  `skein sessions`, with the same messages, tool calls and cost (1e-6 USD);
- tool_calls/: per tool name, the calls and errors of `skein tools --by name`.
Exits 1 with the differences listed when anything differs.
"""

import json
import sys

import duckdb


def jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def table(dataset, name):
    return f"read_parquet('{dataset}/{name}/**/*.parquet', hive_partitioning = true)"


def check_usage(dataset, usage_file, errors):
    totals = jsonl(usage_file)[-1]
    assert totals.get("totals"), totals
    cols = ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"]
    row = duckdb.execute(
        f"select count(*), {', '.join(f'sum({c})' for c in cols)}, sum(cost_usd) "
        f"from {table(dataset, 'usage')}"
    ).fetchone()
    n, *tokens, cost = row
    for c, got in zip(cols, tokens):
        if got != totals[c]:
            errors.append(f"usage {c}: DuckDB {got}, skein usage {totals[c]}")
    if abs((cost or 0) - totals["cost_usd"]) > 1e-6:
        errors.append(f"usage cost: DuckDB {cost}, skein usage {totals['cost_usd']}")
    if n != totals["scan"]["requests"]:
        errors.append(f"usage rows: DuckDB {n}, skein usage {totals['scan']['requests']}")
    kind = duckdb.execute(f"select typeof(timestamp) from {table(dataset, 'usage')} limit 1").fetchone()[0]
    if not kind.startswith("TIMESTAMP"):
        errors.append(f"usage.timestamp is {kind}")
    months = duckdb.execute(f"select distinct month from {table(dataset, 'messages')}").fetchall()
    if not months or not all(len(m[0]) == 7 for m in months):
        errors.append(f"messages month partitions: {months}")
    return f"{n} requests, {sum(tokens)} tokens, ${cost:.6f} equal to skein usage; timestamps {kind}"


def check_sessions(dataset, sessions_file, errors):
    # Keyed by (project, session id). Some fixture trees reuse one id for several transcripts
    # in directories of the same name (entireio__cli's `0/full.jsonl`): `skein sessions` shows
    # one row for all of them (messages and tool calls summed, the cost of one of them, and
    # the last line of a file that does not end in a newline left out), while the export
    # keeps each transcript as `skein usage` and `skein tools` read it. Those rows are
    # matched by key only.
    want = {(r["project"], r["session_id"]): r for r in jsonl(sessions_file)}
    got = {
        (project, sid): (mains, messages, tools, cost)
        for project, sid, mains, messages, tools, cost in duckdb.execute(
            f"select project, session_id, count(*) filter (where agent_id is null), "
            f"sum(messages), sum(tool_calls), sum(cost_usd) "
            f"from {table(dataset, 'sessions')} group by all"
        ).fetchall()
        if mains >= 1
    }
    shared = 0
    for key, r in sorted(want.items()):
        g = got.get(key)
        if g is None:
            errors.append(f"session {key}: in skein sessions, not in the export")
            continue
        mains, messages, tools, cost = g
        if mains > 1:
            shared += 1
            continue
        if (messages, tools) != (r["messages"], r["tool_calls"]) or abs(cost - r["cost_usd"]) > 1e-6:
            errors.append(
                f"session {key}: DuckDB messages {messages}, tool calls {tools}, cost {cost:.6f}; "
                f"skein sessions {r['messages']}, {r['tool_calls']}, {r['cost_usd']:.6f}"
            )
    for key in sorted(set(got) - set(want)):
        errors.append(f"session {key}: in the export, not in skein sessions")
    return (f"{len(want) - shared} sessions with equal messages, tool calls and cost "
            f"(and {shared} ids shared by several transcripts, matched by key)")


def check_tools(dataset, tools_file, errors):
    want = {r["tool"]: (r["calls"], r["errors"]) for r in jsonl(tools_file)}
    got = {
        name: (calls, errs)
        for name, calls, errs in duckdb.execute(
            f"select coalesce(name, ''), count(*), count(*) filter (where is_error) "
            f"from {table(dataset, 'tool_calls')} group by all"
        ).fetchall()
    }
    for name in sorted(set(want) | set(got)):
        if want.get(name) != got.get(name):
            errors.append(f"tool {name!r}: DuckDB (calls, errors) {got.get(name)}, skein tools {want.get(name)}")
    calls = sum(c for c, _ in want.values())
    return f"{len(want)} tools, {calls} calls with equal calls and errors"


def main():
    dataset, usage_file = sys.argv[1], sys.argv[2]
    errors = []
    said = [check_usage(dataset, usage_file, errors)]
    if len(sys.argv) > 4:
        said.append(check_sessions(dataset, sys.argv[3], errors))
        said.append(check_tools(dataset, sys.argv[4], errors))
    if errors:
        print(f"DuckDB {duckdb.__version__}: {len(errors)} differences", file=sys.stderr)
        for e in errors[:50]:
            print(f"  {e}", file=sys.stderr)
        sys.exit(1)
    print(f"DuckDB {duckdb.__version__}: " + "; ".join(said))


main()
