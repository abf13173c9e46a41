#!/usr/bin/env python3
"""What this machine charges for the costs skein's defaults were tuned against
(docs/performance.md, stops 33 and 34):

    benches/machine_probe.py blocks TREE     the page-cache copy by read block size
    benches/machine_probe.py align TREE      the page-cache copy by where in its page a read lands
    benches/machine_probe.py flush FILE      the final sync of a file written over ~1.5 s

`blocks` reads every *.jsonl file under TREE (page cache warm: run it twice) into one reused,
page-aligned buffer of each size, on two processes with half the files each (as skein's two
workers), and prints the seconds per half.

`align` does the same with 128 KiB blocks whose start sits 0, 1, 16, 31, 32, 64 or 2048 bytes
into a page. Every read starts at a multiple of the block in its file, so that offset is also
how far the copy's destination sits past its source within a page. On the AMD EPYC machines
skein is measured on, offsets 1 to 31 made the copy three times as slow: a heap buffer starts
16 bytes into its page, which is why `skein_core::lines` places what it reads
(`skein_core::page`; docs/performance.md, "Reads that land in their page"). Stop 33's
`blocks` read into Python buffers at different places within their pages: the cliff it saw
by block size was this, and with page-aligned buffers the block sizes read alike.

`flush` writes FILE's bytes to a new file in a scratch directory beside it, 128 KiB at a time
with a 2.5 ms pause (a frame being produced), asking the kernel to write back every 8 MiB,
then times the final syncfs; once with the writeback requests alone ("kick") and once with an
fdatasync on a helper thread at each request ("behind", what `skein_store::SyncBehind` does).
"""
import ctypes
import mmap
import os
import sys
import tempfile
import threading
import time
from multiprocessing import Process, Queue

LIBC = ctypes.CDLL(None, use_errno=True)
SYNC_FILE_RANGE_WRITE = 2


def read_all(files, block, offset, out):
    # An anonymous map is page-aligned: the block starts exactly `offset` bytes into a page.
    area = mmap.mmap(-1, block + 4096)
    view = memoryview(area)[offset : offset + block]
    start = time.perf_counter()
    total = 0
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            while True:
                n = os.readv(fd, [view])
                total += n
                if n < block:
                    break
        finally:
            os.close(fd)
    view.release()
    out.put((total, time.perf_counter() - start))


def halves(tree):
    files = sorted(
        os.path.join(d, f) for d, _, names in os.walk(tree) for f in names if f.endswith(".jsonl")
    )
    return [files[0::2], files[1::2]]


def timed(parts, block, offset):
    out = Queue()
    procs = [Process(target=read_all, args=(h, block, offset, out)) for h in parts]
    for p in procs:
        p.start()
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
    return sum(n for n, _ in results), " ".join(f"{s:.3f}" for _, s in results)


def blocks(tree):
    parts = halves(tree)
    for kib in (64, 128, 192, 256, 512, 2048):
        total, secs = timed(parts, kib << 10, 0)
        print(f"block {kib:5d} KiB: {total} bytes, seconds per half {secs}")


def align(tree):
    parts = halves(tree)
    for offset in (0, 1, 16, 31, 32, 64, 2048):
        total, secs = timed(parts, 128 << 10, offset)
        print(f"offset {offset:5d}: {total} bytes, seconds per half {secs}")


def write_frame(data, path, behind):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    written = kicked = 0
    helper = None
    for i in range(0, len(data), 1 << 17):
        written += os.write(fd, data[i : i + (1 << 17)])
        if written - kicked >= 8 << 20:
            LIBC.sync_file_range(
                fd, ctypes.c_longlong(0), ctypes.c_longlong(0), SYNC_FILE_RANGE_WRITE
            )
            kicked = written
            if behind and (helper is None or not helper.is_alive()):
                helper = threading.Thread(target=os.fdatasync, args=(fd,))
                helper.start()
        time.sleep(0.0025)
    if helper is not None:
        helper.join()
    return fd


def flush(source):
    with open(source, "rb") as f:
        data = f.read()
    scratch = tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(source)))
    try:
        for _ in range(3):
            for behind in (False, True):
                path = os.path.join(scratch, "frame")
                fd = write_frame(data, path, behind)
                dfd = os.open(scratch, os.O_RDONLY)
                start = time.perf_counter()
                LIBC.syncfs(dfd)
                took = time.perf_counter() - start
                os.close(dfd)
                os.close(fd)
                os.unlink(path)
                label = "behind" if behind else "kick"
                print(f"{label:6s}: {len(data)} bytes, final syncfs {took * 1000:.1f} ms")
    finally:
        os.rmdir(scratch)


if __name__ == "__main__":
    commands = {"blocks": blocks, "align": align, "flush": flush}
    if len(sys.argv) != 3 or sys.argv[1] not in commands:
        sys.exit(__doc__)
    commands[sys.argv[1]](sys.argv[2])
