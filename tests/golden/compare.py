#!/usr/bin/env python3
"""Compares a fresh golden run with the accepted one: numeric columns within a relative tolerance, text exactly.

usage: compare.py ACCEPTED.csv FRESH.csv [--tolerance 0.005]
Prints every prediction that moved, with old and new values, and exits 1 if any moved beyond the tolerance.
"""
import argparse, csv, sys

# Columns that are predictions or depend on the simulation; names and settings must match exactly.
p = argparse.ArgumentParser()
p.add_argument("accepted"); p.add_argument("fresh")
p.add_argument("--tolerance", type=float, default=0.005, help="relative, default 0.5%%")
a = p.parse_args()

def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return {r["point_id"]: r for r in rows}

old, new = load(a.accepted), load(a.fresh)
moved, problems = [], []
if set(old) != set(new):
    problems.append(f"the cases differ: accepted {sorted(old)} vs fresh {sorted(new)} (cases.yaml changed? run scripts/update-golden.sh)")
for pid in sorted(set(old) & set(new)):
    o, n = old[pid], new[pid]
    name = o.get("case", pid)
    for col in o:
        if col == "simulated_tasks":
            continue  # an engine detail, not a prediction
        x, y = o[col], n.get(col, "")
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            if x != y:
                problems.append(f"{name}: {col} changed from '{x}' to '{y}'")
            continue
        rel = abs(fy - fx) / max(abs(fx), 1e-30)
        if rel > a.tolerance:
            problems.append(f"{name}: {col} moved {100 * rel:.2f}% ({x} -> {y})")
        elif rel > 0:
            moved.append(f"{name}: {col} moved {100 * rel:.4f}% (within tolerance)")
for m in moved[:20]:
    print("     ", m)
if problems:
    print("golden results moved beyond the tolerance of %.2f%%:" % (100 * a.tolerance))
    for pr in problems:
        print("  FAIL", pr)
    print("If the change is intended, review it and run scripts/update-golden.sh (see README, 'Golden results').")
    sys.exit(1)
print(f"golden results: {len(old)} cases within {100 * a.tolerance:.2f}%")
