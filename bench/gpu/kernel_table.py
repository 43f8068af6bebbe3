#!/usr/bin/env python3
"""kernel_table.py — a markdown table of GPU time per kernel from ncu's CSV.

    kernel_table.py FILE   # FILE: ncu --metrics gpu__time_duration.sum --csv --print-units base

Kernels are grouped by name without template or argument lists, largest total first.
Used by scripts/gpu_check.sh's `profile` part; only the Python standard library."""
import csv
import sys
from collections import defaultdict


def short(name):
    name = name.split("(")[0].removeprefix("void ")
    depth, out = 0, []
    for ch in name:  # drop <...> template arguments
        depth += ch == "<"
        if depth == 0:
            out.append(ch)
        depth -= ch == ">"
    return "".join(out).strip() or name


def rows_from(lines):
    start = next((i for i, l in enumerate(lines) if l.startswith('"')), None)
    if start is None:
        sys.exit("kernel_table.py: no CSV header in the input")
    return list(csv.DictReader(lines[start:]))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: kernel_table.py FILE")
    lines = open(sys.argv[1], encoding="utf-8", errors="replace").read().splitlines()
    total_ns, count = defaultdict(float), defaultdict(int)
    for r in rows_from(lines):
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        k = short(r["Kernel Name"])
        total_ns[k] += float(r["Metric Value"].replace(",", ""))  # ns (--print-units base)
        count[k] += 1
    if not total_ns:
        sys.exit("kernel_table.py: no kernel rows in the input")
    all_ns = sum(total_ns.values())
    print(f"All kernels: {all_ns / 1e6:.2f} ms GPU time in {sum(count.values())} launches "
          "(the whole run: warm-up and timed steps)")
    print()
    print("| kernel | launches | total ms | mean us | share |")
    print("|---|---|---|---|---|")
    for k, ns in sorted(total_ns.items(), key=lambda kv: -kv[1])[:25]:
        print(f"| `{k}` | {count[k]} | {ns / 1e6:.2f} | {ns / count[k] / 1e3:.1f} | "
              f"{100 * ns / all_ns:.1f}% |")


if __name__ == "__main__":
    main()
