#!/usr/bin/env python3
"""Independent reference implementation of the `skein stats` contract.

Written from the contract text only (not from skein's code), as a cross-check
for the hand-counted `<case>.expected.json` files in this directory.

Usage:
    oracle.py FILE.jsonl            print the stats JSON for one file
    oracle.py --check [DIR]         compare every DIR/<case>.jsonl with
                                    DIR/<case>.expected.json (default: this dir)
"""
import json
import math
import os
import sys

BOM = b"\xef\xbb\xbf"
CHAIN_TYPES = {"user", "assistant", "progress", "system", "attachment"}
TOKEN_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def _reject_constant(name):
    # Python accepts NaN / Infinity / -Infinity; strict JSON does not.
    raise ValueError("non-standard JSON constant " + name)


def _is_hex4(s):
    return len(s) == 4 and all(c in "0123456789abcdefABCDEF" for c in s)


def fix_lone_surrogates(text):
    """Replace unpaired \\uD800-\\uDFFF escapes by the escape \\ufffd.

    Returns (new_text, changed).  Backslash escapes are consumed pairwise, so
    an escaped backslash followed by `ud83d` is not an escape.
    """
    out = []
    i = 0
    n = len(text)
    changed = False
    while i < n:
        c = text[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= n:
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt != "u" or not _is_hex4(text[i + 2 : i + 6]):
            out.append(text[i : i + 2])
            i += 2
            continue
        cp = int(text[i + 2 : i + 6], 16)
        if 0xD800 <= cp <= 0xDBFF:
            # high surrogate: needs an immediately following low escape
            if (
                text[i + 6 : i + 8] == "\\u"
                and _is_hex4(text[i + 8 : i + 12])
                and 0xDC00 <= int(text[i + 8 : i + 12], 16) <= 0xDFFF
            ):
                out.append(text[i : i + 12])
                i += 12
            else:
                out.append("\\ufffd")
                changed = True
                i += 6
        elif 0xDC00 <= cp <= 0xDFFF:
            out.append("\\ufffd")
            changed = True
            i += 6
        else:
            out.append(text[i : i + 6])
            i += 6
    return "".join(out), changed


def split_lines(data):
    """Yield (lineno, offset, content_bytes, has_newline) for physical lines."""
    pos = len(BOM) if data.startswith(BOM) else 0
    lineno = 0
    n = len(data)
    while pos < n:
        lineno += 1
        nl = data.find(b"\n", pos)
        if nl == -1:
            yield lineno, pos, data[pos:], False
            return
        yield lineno, pos, data[pos:nl], True
        pos = nl + 1


def is_blank(content):
    return all(b in b" \t\r" for b in content)


def parse_line(content):
    """Return (record_or_None, repaired)."""
    try:
        text = content.decode("utf-8")
        repaired = False
    except UnicodeDecodeError:
        text = content.decode("utf-8", errors="replace")
        repaired = True
    text, surr = fix_lone_surrogates(text)
    repaired = repaired or surr
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None, False
    if not isinstance(value, dict):
        return None, False
    return value, repaired


def token_value(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return 0
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return 0
        v = math.trunc(v)
    return v if v > 0 else 0


def stats(path):
    with open(path, "rb") as f:
        data = f.read()

    lines = 0
    invalid = 0
    repaired_lines = 0
    torn = None
    records = []  # valid records in file order
    last_nonblank = None  # (lineno, offset, content, has_newline, valid)

    for lineno, offset, content, has_nl in split_lines(data):
        if is_blank(content):
            continue
        lines += 1
        rec, repaired = parse_line(content)
        if rec is None:
            invalid += 1
        else:
            records.append(rec)
            if repaired:
                repaired_lines += 1
        last_nonblank = (lineno, offset, content, has_nl, rec is not None)

    if last_nonblank is not None:
        lineno, offset, content, has_nl, valid = last_nonblank
        if not has_nl and not valid:
            torn = {"line": lineno, "offset": offset, "bytes": len(content)}

    session_id = None
    for r in records:
        if isinstance(r.get("sessionId"), str):
            session_id = r["sessionId"]
            break

    type_counts = {}
    for r in records:
        t = r.get("type")
        key = t if isinstance(t, str) else "<none>"
        type_counts[key] = type_counts.get(key, 0) + 1
    type_counts = dict(sorted(type_counts.items()))

    ts = [r["timestamp"] for r in records if isinstance(r.get("timestamp"), str)]
    first_ts = min(ts) if ts else None
    last_ts = max(ts) if ts else None

    # ---- chain ----
    nodes = {}  # uuid -> record (first copy)
    order = {}  # uuid -> position of first copy
    dup = 0
    for r in records:
        u = r.get("uuid")
        if not isinstance(u, str):
            continue
        if u in nodes:
            dup += 1
            continue
        order[u] = len(order)
        nodes[u] = r

    def parent_of(u):
        p = nodes[u].get("parentUuid")
        return p if isinstance(p, str) else None

    children = {u: set() for u in nodes}
    roots = dangling = 0
    for u in nodes:
        p = parent_of(u)
        if p is None:
            roots += 1
        elif p not in nodes:
            dangling += 1
        else:
            children[p].add(u)
    branch_points = sum(1 for u in nodes if len(children[u]) >= 2)
    leaves = sum(1 for u in nodes if not children[u])
    compactions = sum(
        1
        for u, r in nodes.items()
        if r.get("type") == "system" and r.get("subtype") == "compact_boundary"
    )
    sidechain = sum(1 for r in nodes.values() if r.get("isSidechain") is True)

    # cycles: functional graph, each node has at most one in-file parent
    color = {}  # 0 = in progress (current walk), 1 = done
    cycles = 0
    for start in nodes:
        if start in color:
            continue
        walk = []
        u = start
        while u is not None and u in nodes and u not in color:
            color[u] = 0
            walk.append(u)
            u = parent_of(u)
        if u is not None and u in nodes and color.get(u) == 0:
            cycles += 1  # closed a cycle inside this walk
        for w in walk:
            color[w] = 1

    def typ(u):
        return nodes[u].get("type")

    candidates = set()
    for u in nodes:
        # Terminals: chain-type nodes without chain-type children (the SDK drops other
        # record types before it looks for terminals).
        if typ(u) not in CHAIN_TYPES or any(typ(c) in CHAIN_TYPES for c in children[u]):
            continue
        seen = set()
        cur = u
        while True:
            if cur in seen:
                break
            seen.add(cur)
            if typ(cur) in ("user", "assistant"):
                candidates.add(cur)
                break
            p = parent_of(cur)
            if p is None or p not in nodes:
                break
            cur = p

    def preferred(u):
        r = nodes[u]
        team = r.get("teamName")
        return not (
            r.get("isSidechain") is True
            or r.get("isMeta") is True
            or (isinstance(team, str) and team != "")
        )

    pool = [u for u in candidates if preferred(u)] or list(candidates)
    active = max(pool, key=lambda u: order[u]) if pool else None
    path_len = 0
    if active is not None:
        seen = set()
        cur = active
        while cur is not None and cur in nodes and cur not in seen:
            seen.add(cur)
            path_len += 1
            cur = parent_of(cur)

    # ---- tools ----
    uses, results, errors = set(), set(), set()
    for r in records:
        t = r.get("type")
        if t not in ("assistant", "user"):
            continue
        msg = r.get("message")
        if not isinstance(msg, dict) or not isinstance(msg.get("content"), list):
            continue
        for b in msg["content"]:
            if not isinstance(b, dict):
                continue
            if t == "assistant" and b.get("type") == "tool_use":
                if isinstance(b.get("id"), str):
                    uses.add(b["id"])
            if t == "user" and b.get("type") == "tool_result":
                tid = b.get("tool_use_id")
                if isinstance(tid, str):
                    results.add(tid)
                    if b.get("is_error") is True:
                        errors.add(tid)

    # ---- usage ----
    groups = {}
    solo = 0
    for r in records:
        if r.get("type") != "assistant":
            continue
        msg = r.get("message")
        if not isinstance(msg, dict) or not isinstance(msg.get("usage"), dict):
            continue
        if msg.get("model") == "<synthetic>":
            continue
        vals = [token_value(msg["usage"].get(k)) for k in TOKEN_FIELDS]
        mid = msg.get("id")
        if isinstance(mid, str):
            rid = r.get("requestId")
            key = (mid, rid if isinstance(rid, str) else "")
        else:
            key = ("<solo>", solo)
            solo += 1
        if key in groups:
            groups[key] = [max(a, b) for a, b in zip(groups[key], vals)]
        else:
            groups[key] = vals
    usage = {"messages": len(groups)}
    for i, k in enumerate(TOKEN_FIELDS):
        usage[k] = sum(g[i] for g in groups.values())

    return {
        "session_id": session_id,
        "lines": lines,
        "invalid_lines": invalid,
        "torn_tail": torn,
        "repaired_lines": repaired_lines,
        "records": type_counts,
        "first_timestamp": first_ts,
        "last_timestamp": last_ts,
        "chain": {
            "nodes": len(nodes),
            "duplicate_uuids": dup,
            "roots": roots,
            "dangling": dangling,
            "branch_points": branch_points,
            "leaves": leaves,
            "compactions": compactions,
            "sidechain": sidechain,
            "cycles": cycles,
            "active_leaf": active,
            "active_path_len": path_len,
        },
        "tools": {
            "uses": len(uses),
            "results": len(results),
            "paired": len(uses & results),
            "unpaired_uses": len(uses - results),
            "orphan_results": len(results - uses),
            "errors": len(errors),
        },
        "usage": usage,
    }


def check(directory):
    bad = 0
    cases = sorted(f[:-6] for f in os.listdir(directory) if f.endswith(".jsonl"))
    for case in cases:
        got = stats(os.path.join(directory, case + ".jsonl"))
        exp_path = os.path.join(directory, case + ".expected.json")
        if not os.path.exists(exp_path):
            print(f"MISSING {case}.expected.json")
            bad += 1
            continue
        with open(exp_path, encoding="utf-8") as f:
            exp = json.load(f)
        diffs = [k for k in exp if exp[k] != got.get(k)]
        missing = [k for k in got if k not in exp]
        if diffs or missing:
            bad += 1
            print(f"FAIL {case}")
            for k in diffs:
                print(f"  {k}: expected {json.dumps(exp[k])}\n  {' ' * len(k)}  oracle   {json.dumps(got.get(k))}")
            for k in missing:
                print(f"  key {k} missing from expected")
        else:
            print(f"ok   {case}")
    print(f"{len(cases) - bad}/{len(cases)} cases agree")
    return bad == 0


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--check":
        d = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(__file__))
        sys.exit(0 if check(d) else 1)
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(json.dumps(stats(sys.argv[1]), indent=2, ensure_ascii=False))
