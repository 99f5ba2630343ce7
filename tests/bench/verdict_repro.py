#!/usr/bin/python3
"""Verdicts that reproduce (issue 31, Goals): do separate invocations agree?

Runs `fleetmark run PLAN --format json` N times with --quick and N times in the default
mode (default N = 5, plan plans/crossover.txtpb), judges every point of every invocation
with the one verdict rule (results_verdicts, engine/measure/verdict.h), and prints:
  - contradictions: points where one invocation says "A wins" and another "B wins",
    B != A (per mode, and across both modes);
  - per mode, the share of points decided / equivalent / undecided (provisional and
    single counted as undecided), and the points whose pooled medians differ by >= 25 %
    between the best and the rest and how many of them were decided;
  - wall time of each invocation, with the 1-minute load average before and after;
  - interval coverage: the share of (case, ordered pair of invocations of one mode) where
    one invocation's prediction interval of the next median (stats.next_*; the CI of the
    median for older results) contains the other's median;
  - contended cases (engine/measure/contention.h) per invocation.
--hog runs a busy process pinned to CPU 0 during all invocations (killed at the end, by
its PID). --rejudge FILE... runs nothing: it judges saved `fleetmark run --format json`
results (several invocations of one plan) with the given results_verdicts, to compare
verdict rules offline (an older build's results_verdicts against the current one);
--ignore-contended judges them as if no case had been contended. --keep DIR keeps each
invocation's results file (MODE-I.json) there. A benchmark, not a
test: it asserts nothing about the figures.

  tests/bench/verdict_repro.py --fleetmark build/release/coordinator/cli/fleetmark \\
      --verdicts build/release/tests/bench/results_verdicts [--runs 5] [--hog]
  tests/bench/verdict_repro.py --verdicts OLD_OR_NEW/results_verdicts --rejudge a.json b.json
"""
import argparse
import collections
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def start_hog():
    """A busy process on CPU 0 (the runner may use every CPU)."""
    def pin():
        os.sched_setaffinity(0, {0})
    return subprocess.Popen(["/usr/bin/python3", "-c", "while True: pass"], preexec_fn=pin)


def run_once(args, mode, index, tmp):
    out = os.path.join(tmp, f"{mode}-{index}.json")
    cmd = [args.fleetmark, "run", args.plan, "--format", "json", "--out", out]
    if mode == "quick":
        cmd.append("--quick")
    load_before = load_average()
    start = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - start
    load_after = load_average()
    if proc.returncode not in (0, 1):  # 1: some case failed; still judged
        sys.exit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr}")
    with open(out) as f:
        doc = json.load(f)
    verdicts = subprocess.run([args.verdicts, out], capture_output=True, text=True, check=True).stdout
    points = {}
    for line in verdicts.splitlines():
        v = json.loads(line)
        points[v["point"]] = v
    results = [r for d in doc["devices"] for r in d["results"]]
    return {"wall": wall, "load_before": load_before, "load_after": load_after, "points": points,
            "results": results, "quick_flag": doc["run"].get("quick", False)}


def case_stats(results):
    """case_id -> (median, low, high) of OK batch results: the interval is the prediction
    interval of the next invocation's median (stats.next_low_ns/next_high_ns) when the
    results have it, else the CI of the median (results of older builds)."""
    out = {}
    for r in results:
        if r.get("status") != "CASE_STATUS_OK" or r["spec"].get("scenario") != "batch":
            continue
        s = r.get("stats", {})
        if s.get("median_ns", 0) > 0:
            if s.get("next_high_ns", 0) > 0:
                out[r["spec"]["case_id"]] = (s["median_ns"], s["next_low_ns"], s["next_high_ns"])
            else:
                out[r["spec"]["case_id"]] = (s["median_ns"], s.get("ci_low_ns", 0), s.get("ci_high_ns", 0))
    return out


def point_of(case_id):
    """scenario/workload/io_mode/label/placement -> scenario/workload/io_mode/placement
    (results_verdicts' point key)."""
    parts = case_id.split("/")
    return "/".join(parts[:3] + parts[4:])


def clear_gap_points(results):
    """Points whose best pooled median beats every other by >= 25 % (the 'Decisive' goal)."""
    by_point = collections.defaultdict(list)
    for r in results:
        if r.get("status") != "CASE_STATUS_OK" or r["spec"].get("scenario") != "batch":
            continue
        by_point[point_of(r["spec"]["case_id"])].append(r["stats"]["median_ns"])
    clear = set()
    for point, medians in by_point.items():
        medians.sort()
        if len(medians) >= 2 and medians[1] >= 1.25 * medians[0]:
            clear.add(point)
    return clear


def summarize(mode, runs):
    kinds = collections.Counter()
    total = 0
    for run in runs:
        for v in run["points"].values():
            if v["contenders"] < 2:
                continue
            total += 1
            kind = v["kind"] if v["kind"] in ("decided", "equivalent") else "undecided"
            kinds[kind] += 1
    pct = {k: (100.0 * kinds[k] / total if total else 0) for k in ("decided", "equivalent", "undecided")}
    # Coverage: ordered pairs of invocations, same case.
    covered = pairs = 0
    stats = [case_stats(r["results"]) for r in runs]
    for a, b in itertools.permutations(range(len(runs)), 2):
        for cid, (_, low, high) in stats[a].items():
            if cid in stats[b]:
                pairs += 1
                covered += low <= stats[b][cid][0] <= high
    # Decisive: clear gaps (by one invocation's pooled medians) decided in that invocation.
    clear = decided_clear = 0
    for run in runs:
        gaps = clear_gap_points(run["results"])
        for point, v in run["points"].items():
            if point in gaps:
                clear += 1
                decided_clear += v["kind"] == "decided"
    walls = [r["wall"] for r in runs]
    contended = [sum(1 for x in r["results"] if x.get("contended")) for r in runs]
    print(f"\n== {mode}: {len(runs)} invocations ==")
    for i, r in enumerate(runs):
        print(f"  invocation {i + 1}: {r['wall']:.1f} s, load {r['load_before']:.2f} -> {r['load_after']:.2f}, "
              f"contended cases {contended[i]}, run.quick={r['quick_flag']}")
    print(f"  wall time: min {min(walls):.1f} s, max {max(walls):.1f} s, mean {sum(walls) / len(walls):.1f} s")
    print(f"  points: {total // max(len(runs), 1)} per invocation; decided {pct['decided']:.0f} %, "
          f"equivalent {pct['equivalent']:.0f} %, undecided {pct['undecided']:.0f} %")
    print(f"  clear gaps (>= 25 % between best and rest): {clear}, decided {decided_clear}")
    print(f"  interval coverage: {covered}/{pairs} = {100.0 * covered / pairs if pairs else 0:.0f} %")


def contradictions(runs):
    """Points where two invocations name different winners."""
    winners = collections.defaultdict(set)
    for run in runs:
        for point, v in run["points"].items():
            if v["kind"] == "decided":
                winners[point].add(v["leader"])
    return {p: w for p, w in winners.items() if len(w) > 1}


def judge_file(args, path, tmp):
    """A saved results file as a run of run_once's shape (no wall time)."""
    with open(path) as f:
        doc = json.load(f)
    if args.ignore_contended:
        for d in doc["devices"]:
            for r in d["results"]:
                r["contended"] = False
        path = os.path.join(tmp, os.path.basename(path))
        with open(path, "w") as f:
            json.dump(doc, f)
    verdicts = subprocess.run([args.verdicts, path], capture_output=True, text=True, check=True).stdout
    points = {}
    for line in verdicts.splitlines():
        v = json.loads(line)
        points[v["point"]] = v
    return {"points": points, "results": [r for d in doc["devices"] for r in d["results"]],
            "quick_flag": doc["run"].get("quick", False)}


def rejudge(args):
    with tempfile.TemporaryDirectory(prefix="verdict_repro.") as tmp:
        runs = [judge_file(args, path, tmp) for path in args.rejudge]
    print(f"rejudged with {args.verdicts}{' (contended ignored)' if args.ignore_contended else ''}, "
          f"load {load_average():.2f}")
    for path, run in zip(args.rejudge, runs):
        kinds = collections.Counter()
        for v in run["points"].values():
            if v["contenders"] >= 2:
                kinds[v["kind"] if v["kind"] in ("decided", "equivalent") else "undecided"] += 1
        total = sum(kinds.values())
        gaps = clear_gap_points(run["results"])
        decided_gaps = sum(1 for p, v in run["points"].items() if p in gaps and v["kind"] == "decided")
        margins = sorted({round(v["margin"] * 100, 1) for v in run["points"].values()})
        print(f"  {path}: {total} points, decided {kinds['decided']}, equivalent {kinds['equivalent']}, "
              f"undecided {kinds['undecided']} ({100.0 * (kinds['decided'] + kinds['equivalent']) / max(total, 1):.0f} % "
              f"decided or equivalent); clear gaps {len(gaps)}, decided {decided_gaps}; margin {margins} %")
    c = contradictions(runs)
    print(f"  contradictions between the files: {len(c)}")
    for point, winners in sorted(c.items()):
        print(f"    {point}: {', '.join(sorted(winners))}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fleetmark")
    parser.add_argument("--verdicts", required=True, help="the results_verdicts tool")
    parser.add_argument("--plan", default="plans/crossover.txtpb")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--modes", default="quick,default")
    parser.add_argument("--hog", action="store_true", help="a busy process on CPU 0 during the runs")
    parser.add_argument("--rejudge", nargs="+", metavar="FILE", help="judge saved results files, run nothing")
    parser.add_argument("--keep", metavar="DIR", help="keep each invocation's results in DIR (for --rejudge)")
    parser.add_argument("--ignore-contended", action="store_true", help="with --rejudge: as if none was contended")
    args = parser.parse_args()
    if args.rejudge:
        rejudge(args)
        return
    if not args.fleetmark:
        parser.error("--fleetmark is required unless --rejudge")
    modes = [m for m in args.modes.split(",") if m]
    hog = start_hog() if args.hog else None
    all_runs = {}
    try:
        with tempfile.TemporaryDirectory(prefix="verdict_repro.") as scratch:
            tmp = args.keep or scratch
            os.makedirs(tmp, exist_ok=True)
            print(f"plan {args.plan}, {args.runs} invocations per mode, hog {'on CPU 0' if hog else 'off'}, "
                  f"{os.cpu_count()} CPUs, load {load_average():.2f}")
            for mode in modes:
                all_runs[mode] = []
                for i in range(args.runs):
                    run = run_once(args, mode, i, tmp)
                    all_runs[mode].append(run)
                    print(f"  {mode} {i + 1}/{args.runs}: {run['wall']:.1f} s (load {run['load_after']:.2f})",
                          flush=True)
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
    for mode in modes:
        summarize(mode, all_runs[mode])
    print()
    for label, runs in [(m, all_runs[m]) for m in modes] + [("all modes", sum(all_runs.values(), []))]:
        c = contradictions(runs)
        print(f"contradictions ({label}): {len(c)}")
        for point, winners in sorted(c.items()):
            print(f"  {point}: {', '.join(sorted(winners))}")


if __name__ == "__main__":
    main()
