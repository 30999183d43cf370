"""The memory-bandwidth floor: how fast this machine streams an array too big for its caches.

Usage: python bench/bandwidth.py [--threads 1 2] [--mb 512]

A generated token's step reads each weight once, so it can go no faster than its bytes read
over the rate memory delivers them. That rate is measured as simply as possible: numpy ORs
together the 64-bit words of an array of `mb` megabytes (np.bitwise_or.reduce: one integer
instruction per 8 bytes, the cheapest of numpy's reductions, and run without the GIL, so n
Python threads each read their 1/n of it at once); the best of several passes counts, since
the floor is the most the machine gave.

Example: rate(1) -> 1.2e10 (bytes a second, one thread); floor_ms(111e6, 1.2e10) -> 9.25
"""

import argparse
import sys
import threading
import time

MB = 512


def rate(threads, mb=MB, passes=7):  # -> bytes per second, the best pass of `passes`
    import numpy as np

    a = np.ones(mb * (1 << 20) // 8, np.uint64)  # written once: every page is really there
    parts = np.array_split(a, threads)
    read = np.bitwise_or.reduce
    best = float("inf")
    for _ in range(passes):
        sums = [threading.Thread(target=read, args=(p,)) for p in parts[1:]]
        start = time.perf_counter()
        for t in sums:
            t.start()
        read(parts[0])
        for t in sums:
            t.join()
        best = min(best, time.perf_counter() - start)
    return a.nbytes / best


def floor_ms(bytes_read, bytes_per_second):  # -> the fastest a step reading them can be, ms
    return bytes_read / bytes_per_second * 1e3


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--mb", type=int, default=MB)
    args = parser.parse_args(argv)
    for n in args.threads:
        print(f"{n} thread(s): {rate(n, args.mb) / 1e9:.1f} GB/s streaming read of {args.mb} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
