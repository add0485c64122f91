#!/usr/bin/env python3
"""The cost of training steps from two callgrind profiles of `windtunnel bench` that differ
only in the number of timed steps (scripts/count-step.sh: 1 and 3): their difference is two
steps without start-up or init. Reports instructions per step, how many the matrix products
(`numerics::gemm`) execute, and the costliest source files outside them. Self costs only, so
no cost is counted twice and the rayon worker threads need no call graph.

    callgrind_step.py PROFILE_1 PROFILE_3 BENCH_JSON   → the bench's JSON plus the counts
"""
import collections
import json
import re
import sys


def self_costs(path):
    """(function, file) → instructions executed in that function's own code, inlined code
    attributed to the file it came from (callgrind's fi=/fe= lines)."""
    names = {"fn": {}, "fl": {}}
    cost = collections.Counter()
    fn = fl = cur_file = None
    in_call = False
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"^(fn|fl|fi|fe|cfn|cfl|cfi|cob|ob)=\((\d+)\)(?: (.*))?$", line)
        if m:
            kind, ident, name = m.groups()
            table = names["fn"] if kind in ("fn", "cfn") else names["fl"]
            if name is not None:
                table[ident] = name
            if kind == "fn":
                fn = table[ident]
            elif kind == "fl":
                fl = cur_file = table[ident]
            elif kind in ("fi", "fe"):
                cur_file = table[ident]
            continue
        if line.startswith("calls="):
            in_call = True  # the next cost line is the call's inclusive cost: skip it
            continue
        if line and (line[0].isdigit() or line[0] in "+-*"):
            parts = line.split()
            if in_call:
                in_call = False
                continue
            if len(parts) >= 2 and fn is not None:
                cost[(fn, cur_file or fl)] += int(parts[1])
    return cost


def main():
    short_run, long_run, bench = sys.argv[1], sys.argv[2], sys.argv[3]
    steps = 2
    cost = self_costs(long_run)
    cost.subtract(self_costs(short_run))
    total = sum(cost.values())
    products = sum(c for (fn, _), c in cost.items() if "numerics::gemm::" in fn)
    by_file = collections.Counter()
    for (fn, fl), c in cost.items():
        if "numerics::gemm::" not in fn:
            by_file[re.sub(r".*/(src|library)/", "", fl or "?")] += c
    out = json.loads(open(bench, encoding="utf-8").read())
    out.update({
        "counted_level": "avx2+fma (valgrind runs no AVX-512)",
        "instructions_per_step": round(total / steps),
        "product_instructions_per_step": round(products / steps),
        "share_outside_products": round(1 - products / total, 4),
        "outside_products_by_file": {f: round(c / steps) for f, c in by_file.most_common(12)},
    })
    print(json.dumps(out))


if __name__ == "__main__":
    main()
