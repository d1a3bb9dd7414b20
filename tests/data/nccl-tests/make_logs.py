#!/usr/bin/env python3
"""Writes the nccl-tests logs in this folder (test data, not measurements).

The layout is nccl-tests' own (src/util.cu: writeDeviceReport, writeResultHeader, writeBenchmarkLine*,
version 2.13 and, for all_gather, the older header without the 'Collective test starting' line). The
numbers are shaped by hand after published DGX A100 behaviour: ~11-13 us for tiny all-reduces on one
node, a protocol change around 64 KiB and 16 MiB, large-message busbw ~230 GB/s on NVLink3 (NVIDIA/
nccl-tests issue 149) and ~190 GB/s across 8x HDR 200 Gb/s (NVIDIA/nccl issue 812). Deterministic noise.
Run: python3 make_logs.py  (from this folder)
"""
import math

def fstr(v, w):
    for fmt in ("%*.2f", "%*.1f", "%*.0f"):
        s = fmt % (w, v)
        if len(s) <= w:
            return s
    return ("%*.1e" if w >= 7 else "%*.0e") % (w, v)

def noise(i):
    return 1 + 0.012 * math.sin(7.1 * i + 0.3)

def time_us(size, factor, regimes):
    # regimes: (upper_bytes, alpha_us, busbw_GBps); the fastest protocol NCCL picks per size
    for upper, alpha, bw in regimes:
        if size < upper:
            return alpha + size * factor / (bw * 1e3)
    raise ValueError

def table(sizes, elem, typ, redop, root, factor, regimes):
    out = []
    for i, s in enumerate(sizes):
        t1 = time_us(s, factor, regimes) * noise(i)
        t2 = time_us(s, factor, regimes) * noise(i + 11)
        a1, a2 = s / t1 / 1e3, s / t2 / 1e3
        line = "%12li  %12li  %8s  %6s  %6s" % (s, s // elem, typ, redop, "%6i" % root)
        for t, a in ((t1, a1), (t2, a2)):
            line += "  %7s  %6s  %6s  %6g" % (fstr(t, 7), fstr(a, 6), fstr(a * factor, 6), 0)
        out.append(line)
    return out

def ranks(hosts, per_host, pid0=41230, group=True):
    lines = []
    for h, host in enumerate(hosts):
        for d in range(per_host):
            r = h * per_host + d
            g = "Group %2d " % 0 if group else ""
            lines.append("#  Rank %2d %sPid %6d on %10s device %2d [%04x:%02x:%02x] NVIDIA A100-SXM4-80GB" %
                         (r, g, pid0 + h, host, d, 0, [7, 15, 71, 78, 135, 144, 183, 190][d], 0))
    return lines

HEADER_NEW = [
    "#",
    "#                                                              out-of-place                       in-place          ",
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)        ",
]

def write(name, lines):
    lines = ["# podsim test data written by tests/data/nccl-tests/make_logs.py in nccl-tests' output format; "
             "not a measurement"] + lines
    with open(name, "w") as f:
        f.write("\n".join(lines) + "\n")

sizes = [8 << i for i in range(31)]  # 8 B .. 8 GiB
n = 8
ar = [(65536, 11.8, 18.0), (16 << 20, 19.0, 150.0), (1 << 60, 48.0, 231.0)]
lines = ["# nccl-tests version 2.13.9 nccl-headers=21903 nccl-library=21903",
         "# Collective test starting: all_reduce_perf",
         "# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
         "#", "# Using devices"] + ranks(["dgx-a1"], 8) + HEADER_NEW
lines += table(sizes, 4, "float", "sum", -1, 2 * (n - 1) / n, ar)
lines += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 71.5209 ", "#", "# Collective test concluded: all_reduce_perf", ""]
write("all_reduce_perf.dgx-a100.8gpu.log", lines)

# all_gather in the pre-2.14 layout: no version or 'test starting' line; NCCL's own INFO lines mixed in.
ag = [(65536, 8.9, 16.0), (16 << 20, 14.0, 140.0), (1 << 60, 40.0, 226.0)]
sizes_ag = [1024 << (2 * i) for i in range(11)]  # 1 KiB .. 1 GiB, factor 4
lines = ["# nThread 1 nGpus 8 minBytes 1024 maxBytes 1073741824 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
         "#", "# Using devices"] + ranks(["dgx-a1"], 8, group=False)
lines += ["dgx-a1:41230:41230 [0] NCCL INFO Bootstrap : Using ibp12s0:10.0.0.1<0>",
          "dgx-a1:41230:41230 [0] NCCL INFO NCCL version 2.18.3+cuda12.2"]
lines += HEADER_NEW + table(sizes_ag, 4, "float", "none", -1, (n - 1) / n, ag)
lines += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 98.0000 ", "#"]
write("all_gather_perf.dgx-a100.8gpu.log", lines)

# all_reduce across two DGX A100 (16 ranks): bound by the 8 HDR rails.
n = 16
ar2 = [(65536, 24.0, 8.0), (16 << 20, 38.0, 110.0), (1 << 60, 95.0, 189.0)]
sizes2 = [8 << i for i in range(28)]  # 8 B .. 1 GiB
lines = ["# nccl-tests version 2.13.9 nccl-headers=21903 nccl-library=21903",
         "# Collective test starting: all_reduce_perf",
         "# nThread 1 nGpus 1 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
         "#", "# Using devices"] + ranks(["dgx-a1", "dgx-a2"], 8) + HEADER_NEW
lines += table(sizes2, 4, "float", "sum", -1, 2 * (n - 1) / n, ar2)
lines += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 60.1 ", "#", "# Collective test concluded: all_reduce_perf"]
write("all_reduce_perf.dgx-a100.2node.log", lines)
