"""Compares the Spark job's daily totals with `skein usage daily --format jsonl` (both UTC days):
requests and the four token sums exactly, the cost to 1e-6 USD (skein rounds to it). Prints one line per day and
exits 1 on any difference.

usage: compare.py SPARK_JSONL SKEIN_JSONL
"""

import json
import sys

TOKENS = ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"]


def jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    spark = {r["date"]: r for r in jsonl(sys.argv[1])}
    skein = {r["date"]: r for r in jsonl(sys.argv[2]) if "date" in r}
    bad = 0
    print(f"{'day':<10} {'requests':>9} {'tokens':>14} {'cost (Spark)':>14} {'cost (skein)':>14}  equal")
    for day in sorted(set(spark) | set(skein)):
        a, b = spark.get(day), skein.get(day)
        if a is None or b is None:
            bad += 1
            print(f"{day:<10} only in {'skein' if a is None else 'Spark'}")
            continue
        # skein rounds each day's cost to 1e-6 USD; its `messages` are the day's requests.
        same = [a[c] == b[c] for c in TOKENS] + [
            a["requests"] == b["messages"],
            abs(a["cost_usd"] - b["cost_usd"]) <= 1e-6,
        ]
        ok = all(same)
        bad += not ok
        tokens = sum(a[c] for c in TOKENS)
        print(f"{day:<10} {a['requests']:>9} {tokens:>14} {a['cost_usd']:>14.6f} {b['cost_usd']:>14.6f}  "
              f"{'yes' if ok else 'NO'}")
    days = len(set(spark) | set(skein))
    if bad:
        print(f"{bad} of {days} days differ")
        sys.exit(1)
    print(f"all {days} days equal (requests, four token sums, cost)")


main()
