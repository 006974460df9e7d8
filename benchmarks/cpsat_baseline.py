#!/usr/bin/env python3
"""The Lucy paper's solver, side by side with lucy's.

The paper solves its walk problem (eqs. 1-9, section 3.3) with OR-Tools
CP-SAT. This script builds that model, with the fixes documented in
docs/generate-view.md (eq. 5 conditional on both sides being in the walk,
settled by one junction of the patterns between the same sides (C3 case a)
or by a bridge between them (case c); eqs. 6/7 only at interior
positions), for the instances that
`solve_bench --export FILE` wrote (the same relevant sets, the same n: the
walk length lucy proved optimal), solves it on one worker and compares:

* CP-SAT time (model building included) vs lucy's production path
  (`generate_view`, as timed by solve_bench);
* the optimal objective, (n+1)*cost + length, on every query;
* CP-SAT on lucy's *reduced* model (only the (table, step) variables that
  lucy's exact reductions keep), to separate what the reductions give from
  what the solver gives.

Usage:
  scripts/cpsat-venv.sh                       # installs the pinned ortools
  cargo run \
      --example solve_bench -- --no-before --export /tmp/inst.jsonl
  ~/.cache/lucy/venv-cpsat/bin/python benchmarks/cpsat_baseline.py /tmp/inst.jsonl

Prints a markdown table; `--json` prints per-query rows instead (progress
goes to stderr); `--limit S` sets CP-SAT's time limit per solve (default 60). Exit 1 if a proved CP-SAT optimum differs from lucy's
or CP-SAT proves infeasible a query lucy solved (every exported query has lucy's optimal walk).
"""

import json
import statistics
import sys
import time

from ortools.sat.python import cp_model

ORTOOLS_VERSION = "9.15.6755"
TIME_LIMIT_S = 60.0


def build(inst, reduced):
    """The paper's layered model for one instance. Returns (model, b, sink)."""
    nodes = inst["nodes"]
    V = len(nodes)
    n = inst["n"]
    adj = [[] for _ in range(V)]
    for a, c in inst["edges"]:
        adj[a].append(c)
        adj[c].append(a)
    relevant = set(inst["relevant"])
    lookups = inst["lookups"]
    allowed = None
    if reduced:
        allowed = [set(s) for s in inst["reduced_steps"]]

    m = cp_model.CpModel()
    F = m.new_constant(0)
    b = {}
    for i in range(V):
        for r in range(1, n + 1):
            if allowed is not None and r not in allowed[i]:
                continue
            b[i, r] = m.new_bool_var(f"b{i}_{r}")
    B = lambda i, r: b.get((i, r), F)
    # Sink b_d^r (the walk has ended before step r).
    d = [None] + [m.new_bool_var(f"d{r}") for r in range(1, n + 1)]
    m.add(d[1] == 0)
    for r in range(1, n + 1):
        # Eq. (8): one node (or the sink) per step.
        m.add_exactly_one([B(i, r) for i in range(V) if (i, r) in b] + [d[r]])
    for r in range(1, n):
        # Eq. (9): once in the sink, stay there.
        m.add_implication(d[r], d[r + 1])
        # Eq. (3) (C1): the next step is a neighbour or the sink.
        for i in range(V):
            if (i, r) not in b:
                continue
            m.add_bool_or([B(j, r + 1) for j in adj[i] if (j, r + 1) in b] + [d[r + 1]]).only_enforce_if(b[i, r])
    occ = {}
    for i in range(V):
        terms = [b[i, r] for r in range(1, n + 1) if (i, r) in b]
        occ[i] = sum(terms) if terms else 0
    # Eq. (4) (C2).
    for t in relevant:
        m.add(occ[t] >= 1)
    # Eq. (7) (C4), fixed: at an interior position a lookup returns to the
    # table it came from.
    for l in lookups:
        for r in range(2, n):
            if (l, r) not in b:
                continue
            for j in adj[l]:
                if (j, r - 1) in b:
                    m.add_bool_or([B(j, r + 1), d[r + 1]]).only_enforce_if([b[l, r], b[j, r - 1]])
    # Eqs. (5)/(6) (C3), fixed.
    def pair(a, c):
        return tuple(sorted((a, c)))

    def between(t, r, si, sj):
        """t at interior step r with the two sides around it."""
        y = m.new_bool_var("")
        o1 = m.new_bool_var("")
        o2 = m.new_bool_var("")
        m.add_bool_and([b[t, r], d[r + 1].Not()]).only_enforce_if(y)
        m.add_bool_and([B(si, r - 1), B(sj, r + 1)]).only_enforce_if(o1)
        m.add_bool_and([B(sj, r - 1), B(si, r + 1)]).only_enforce_if(o2)
        m.add_bool_or([o1, o2]).only_enforce_if(y)
        return y

    interior_of = {}
    for k, si, sj in inst["junctions"]:
        interior = []
        for r in range(2, n):
            if (k, r) not in b:
                continue
            # Eq. (6) at interior positions: between the two sides.
            x = between(k, r, si, sj)  # k at r and the walk goes on
            m.add_bool_or([b[k, r].Not(), d[r + 1], x])
            interior.append(x)
        interior_of[k] = interior
    # C3 case c: a bridge t of the sides at an interior step between them.
    bridged = {}
    for t, si, sj in inst.get("bridges", []):
        bridged.setdefault(pair(si, sj), []).extend(between(t, r, si, sj) for r in range(2, n) if (t, r) in b)
    for k, si, sj in inst["junctions"]:
        # Eq. (5), conditional: if both sides occur, k occurs at most once,
        # only at an interior position, and one junction of the patterns
        # between the same sides (case a) or a bridge of them (case c) sits
        # between them.
        ui = m.new_bool_var("")
        uj = m.new_bool_var("")
        m.add(occ[si] >= 1).only_enforce_if(ui)
        m.add(occ[si] == 0).only_enforce_if(ui.Not())
        m.add(occ[sj] >= 1).only_enforce_if(uj)
        m.add(occ[sj] == 0).only_enforce_if(uj.Not())
        w = m.new_bool_var("")
        m.add_bool_and([ui, uj]).only_enforce_if(w)
        m.add_bool_or([ui.Not(), uj.Not(), w])
        m.add(occ[k] <= 1).only_enforce_if(w)
        m.add(occ[k] == sum(interior_of[k])).only_enforce_if(w)
        group = [g for g, gi, gj in inst["junctions"] if pair(gi, gj) == pair(si, sj)]
        settle = [x for g in group for x in interior_of[g]] + bridged.get(pair(si, sj), [])
        m.add_bool_or(settle if settle else [F]).only_enforce_if(w)
    # Eq. (1) (C5) with lucy's tie-break: (n+1)*cost + length.
    obj = []
    for (i, r), v in b.items():
        obj.append((1 + (n + 1) * (0 if i in relevant else 1)) * v)
    m.minimize(sum(obj))
    return m


def solve(inst, reduced):
    t0 = time.perf_counter()
    m = build(inst, reduced)
    s = cp_model.CpSolver()
    s.parameters.num_workers = 1
    s.parameters.max_time_in_seconds = TIME_LIMIT_S
    st = s.solve(m)
    ms = (time.perf_counter() - t0) * 1e3
    if st == cp_model.OPTIMAL:
        return ms, round(s.objective_value), "optimal"
    if st == cp_model.FEASIBLE:
        return ms, round(s.objective_value), "feasible"
    return ms, None, s.status_name(st).lower()


def pct(v, p):
    v = sorted(v)
    if not v:
        return float("nan")
    return v[round((len(v) - 1) * p)]


def main():
    global TIME_LIMIT_S
    argv = sys.argv[1:]
    if "--limit" in argv:
        i = argv.index("--limit")
        TIME_LIMIT_S = float(argv[i + 1])
        del argv[i : i + 2]
    args = [a for a in argv if not a.startswith("--")]
    as_json = "--json" in argv
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    rows = []
    with open(args[0]) as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
    by_model = {}
    bad = 0
    for qi, inst in enumerate(rows):
        n = inst["n"]
        lucy_obj = (n + 1) * inst["lucy_cost"] + inst["lucy_len"]
        ms, obj, st = solve(inst, reduced=False)
        rms, robj, rst = solve(inst, reduced=True)
        # A disagreement is a *proved* optimum that differs from lucy's; a
        # CP-SAT run stopped by its time limit proves nothing.
        # Every exported query has lucy's optimal walk: CP-SAT proving it
        # infeasible is a disagreement too.
        wrong = (st == "optimal" and obj != lucy_obj) or (rst == "optimal" and robj != lucy_obj) or "infeasible" in (st, rst)
        if wrong:
            bad += 1
        rec = {
            "model": inst["model"],
            "query": inst["query"],
            "n": n,
            "lucy_ms": inst["lucy_ms"],
            "lucy_obj": lucy_obj,
            "cpsat_ms": ms,
            "cpsat_obj": obj,
            "cpsat_status": st,
            "cpsat_reduced_ms": rms,
            "cpsat_reduced_obj": robj,
            "cpsat_reduced_status": rst,
            "disagree": wrong,
        }
        print(f"[{qi + 1}/{len(rows)}] {inst['model']}: CP-SAT {st} {ms:.0f} ms, reduced {rst} {rms:.0f} ms, lucy {inst['lucy_ms']:.1f} ms", file=sys.stderr)
        if as_json:
            print(json.dumps(rec), flush=True)
        by_model.setdefault(inst["model"], []).append(rec)
    if not as_json:
        print(f"OR-Tools CP-SAT {ORTOOLS_VERSION}, 1 worker, {TIME_LIMIT_S:.0f} s limit per solve, model building included; lucy = generate_view as timed by solve_bench.")
        print()
        print("| model | queries | CP-SAT median / p95 ms | CP-SAT proved optimal | CP-SAT on lucy's reduced model median / p95 ms | reduced proved optimal | lucy median / p95 ms | CP-SAT / lucy per query: median (worst) | proved optima equal to lucy's |")
        print("|---|---|---|---|---|---|---|---|---|")
        for model, rs in by_model.items():
            c = [r["cpsat_ms"] for r in rs]
            cr = [r["cpsat_reduced_ms"] for r in rs]
            lu = [r["lucy_ms"] for r in rs]
            ratio = [r["cpsat_ms"] / max(r["lucy_ms"], 1e-6) for r in rs]
            opt = sum(1 for r in rs if r["cpsat_status"] == "optimal")
            ropt = sum(1 for r in rs if r["cpsat_reduced_status"] == "optimal")
            infeasible = sum((r["cpsat_status"] == "infeasible") + (r["cpsat_reduced_status"] == "infeasible") for r in rs)
            proved = opt + ropt + infeasible
            equal = opt + ropt - sum(
                (r["cpsat_status"] == "optimal" and r["cpsat_obj"] != r["lucy_obj"])
                + (r["cpsat_reduced_status"] == "optimal" and r["cpsat_reduced_obj"] != r["lucy_obj"])
                for r in rs
            )
            print(
                f"| {model} | {len(rs)} | {pct(c, .5):.1f} / {pct(c, .95):.1f} | {opt}/{len(rs)} | {pct(cr, .5):.1f} / {pct(cr, .95):.1f} | {ropt}/{len(rs)} "
                f"| {pct(lu, .5):.2f} / {pct(lu, .95):.2f} | {statistics.median(ratio):.2f}× ({min(ratio):.2f}×) | {equal}/{proved} |"
            )
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
