#!/usr/bin/env python3
"""Two skein binaries on one catalog-backed command, interleaved, for a shared machine:

    benches/catalog_ab.py BEFORE DB_BEFORE AFTER DB_AFTER TREE ROUNDS -- ARGS...

e.g. `benches/catalog_ab.py old/skein old.db target/release/skein new.db /work/bench/tree20 6
-- usage daily -q --format jsonl`. Each round runs each binary 5 times (ARGS, then `--catalog
DB TREE`), alternating, so both meet the same load; prints the medians of the child's CPU time
(user + sys) and of the wall time, and the load average. Each binary uses its own catalog (a
catalog written by a newer schema is rebuilt by an older binary). HOME and XDG_STATE_HOME point
into a temp dir: nothing real is read.
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

if "--" not in sys.argv or sys.argv.index("--") != 7:
    sys.exit(__doc__)
before, db_before, after, db_after, tree, rounds = sys.argv[1:7]
args = sys.argv[8:]
home = tempfile.mkdtemp(prefix="skein-ab-")
env = dict(os.environ, HOME=home, XDG_STATE_HOME=os.path.join(home, "state"))
runs = {before: ([], []), after: ([], [])}
for _ in range(int(rounds)):
    for binary, db in ((before, db_before), (after, db_after)):
        for _ in range(5):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run([binary, *args, "--catalog", db, tree], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            t1 = time.perf_counter()
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
            runs[binary][0].append(cpu * 1000)
            runs[binary][1].append((t1 - t0) * 1000)
for name, binary in (("before", before), ("after", after)):
    cpu, wall = runs[binary]
    print(f"{name} ({binary}): CPU {statistics.median(cpu):.1f} ms, wall {statistics.median(wall):.1f} ms "
          f"(medians of {len(wall)} runs)")
print("load:", " ".join(open("/proc/loadavg").read().split()[:3]))
