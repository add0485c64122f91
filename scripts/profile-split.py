#!/usr/bin/env python3
"""Shares of a training step's samples by the part of the model they belong to.

    perf record -e cpu-clock -F 2000 -o DATA BINARY bench --steps 25 --eval-every 1000000
    scripts/profile-split.py DATA BINARY

Most of the step's code is inlined into a few symbols (`task_avx512`, `run_avx512`), so a
profile by symbol cannot tell GELU from LayerNorm. This walks each sampled address's inline chain
(`addr2line -i`) from the innermost frame outwards and names the part by the first of:
the matrix kernel's files (numerics/gemm.rs, register_tile.rs, matmul.rs: "products"), then the
first frame in src/model/ or src/train/ (its file, "backward" where a frame's function is one).
Samples outside the binary are "kernel and libraries".
"""
import collections
import re
import subprocess
import sys

PRODUCTS = ("numerics/gemm.rs", "numerics/register_tile.rs", "numerics/matmul.rs")


def mapping(data, binary):
    """The load address and file offset of the binary's text in the recorded process."""
    out = subprocess.run(["perf", "script", "-i", data, "--show-mmap-events"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "MMAP" in line and line.endswith(binary) and "r-xp" in line:
            m = re.search(r"\[(0x[0-9a-f]+)\(0x[0-9a-f]+\) @ (0x[0-9a-f]+)", line)
            return int(m.group(1), 16), int(m.group(2), 16)
    sys.exit(f"{binary} is not mapped in {data}")


def text_bias(binary):
    """Virtual address minus file offset of the executable segment (what addr2line wants)."""
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD" and "E" in f[6:-1]:  # flags sit between the sizes and the alignment
            return int(f[2], 16) - int(f[1], 16)
    sys.exit(f"{binary}: no executable LOAD segment")


def frames(binary, addrs):
    """addr → [(function, file)] innermost first, by one addr2line call."""
    out = subprocess.run(
        ["addr2line", "-e", binary, "-i", "-f", "-C", "-a"] + [hex(a) for a in addrs],
        capture_output=True, text=True).stdout.splitlines()
    result, cur, i = {}, None, 0
    while i < len(out):
        if re.fullmatch(r"0x[0-9a-f]+", out[i]):
            cur = int(out[i], 16)
            result[cur] = []
            i += 1
            continue
        result[cur].append((out[i], out[i + 1] if i + 1 < len(out) else ""))
        i += 2
    return result


def ours(f):
    """A location in this crate's source (not the standard library's or a dependency's)."""
    return "/src/" in f and "/rustc/" not in f and "/.cargo/" not in f


def part(chain):
    files = [f for _, f in chain]
    if any(p in f for f in files for p in PRODUCTS):
        return "products"
    for k, (_, f) in enumerate(chain):
        m = re.search(r"/src/((model|train|optim)/[a-z_]+)\.rs", f)
        if m and ours(f):
            # A frame's location lies in the next-outer frame's function: take the names up to it.
            backward = any("backward" in fn for fn, _ in chain[: k + 2])
            return m.group(1) + (" backward" if backward else "")
    for _, f in chain:
        if ours(f):
            return re.search(r"/src/([a-z_/]+)\.rs", f).group(1)
    return "inlined library code, no frame of ours"


def main():
    data, binary = sys.argv[1], sys.argv[2]
    base, off = mapping(data, binary)
    ips = subprocess.run(["perf", "script", "-i", data, "-F", "ip,dso"], capture_output=True, text=True).stdout.split("\n")
    bias = text_bias(binary)
    counts, outside = collections.Counter(), 0
    for line in ips:
        parts = line.split()
        if len(parts) < 2:
            continue
        if not parts[1].endswith("(" + binary + ")"):
            outside += 1
            continue
        counts[int(parts[0], 16) - base + off + bias] += 1
    chains = frames(binary, sorted(counts))
    shares = collections.Counter()
    for a, n in counts.items():
        shares[part(chains.get(a, []))] += n
    shares["kernel and libraries"] += outside
    total = sum(shares.values())
    for name, n in shares.most_common():
        print(f"{100 * n / total:6.2f} %  {name}")
    print(f"{total} samples")


if __name__ == "__main__":
    main()
