#!/usr/bin/python3
"""CI coverage across processes (issue 13, item 1): do separate runs agree?

Runs the same 10-case plan in 5 separate `fleetmark run` invocations, once with
measurement.processes = 1 (every sample in one i.i.d. pool: the CI of one process, the
behaviour before processes existed) and once with processes = 3 (hierarchical CI), at the
same CI target, and prints for each: the share of invocation pairs (10 cases x 10 pairs)
whose 95% CIs of the median overlap, how many cases met the target, and the wall time of
an invocation. A benchmark, not a test: it asserts nothing about the figures.

  tests/bench/ci_coverage.py --fleetmark build/release/coordinator/cli/fleetmark
"""
import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MATRICES = """
matrix {
  strategies { name: "direct" }
  strategies { name: "single_thread" }
  strategies { name: "fixed_pool" threads: 2 label: "fixed_pool_2" }
  strategies { name: "work_stealing" threads: 2 label: "work_stealing_2" }
  strategies { name: "thread_per_task" }
  workloads: ["collections"]
  batch { tasks: 100 }
}
matrix {
  strategies { name: "direct" }
  strategies { name: "fixed_pool" threads: 2 label: "fixed_pool_2" }
  workloads: ["arithmetic"]
  batch { tasks: 100 }
}
matrix {
  strategies { name: "fixed_pool" threads: 100 label: "fixed_pool_io" }
  strategies { name: "elastic_pool" threads: 100 label: "elastic_pool_io" }
  workloads: ["storage"]
  batch { tasks: 20 }
}
matrix {
  strategies { name: "coroutine" threads: 2 label: "coroutine_2" }
  workloads: ["storage"]
  io_modes: ["suspending"]
  batch { tasks: 20 }
}
"""


def plan_text(processes, args):
    return (f'name: "ci-coverage"\n{MATRICES}\nmeasurement {{\n'
            f'  warmup_seconds: {args.warmup} target_ci_percent: {args.target}\n'
            f'  min_repetitions: 10 max_repetitions: 1000\n'
            f'  max_seconds_per_case: {args.max_seconds} rounds: 3 processes: {processes}\n}}\n')


def run_once(fleetmark, plan_path, out_path):
    start = time.monotonic()
    proc = subprocess.run([fleetmark, "run", plan_path, "--format", "json", "--out", out_path],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - start
    if proc.returncode not in (0, 3):
        sys.exit(f"fleetmark run failed ({proc.returncode}): {proc.stderr}")
    with open(out_path) as f:
        report = json.load(f)
    cases = {}
    for r in (r for d in report.get("devices", []) for r in d.get("results", [])):
        st = r.get("stats", {})
        if r.get("status") != "CASE_STATUS_OK" or not st.get("count"):
            continue
        cases[r["spec"]["case_id"]] = (float(st["ci_low_ns"]), float(st["ci_high_ns"]),
                                       float(st["median_ns"]), r.get("stop_reason", ""),
                                       float(r.get("between_process_share", 0.0)))
    return wall, cases


def measure(processes, args, tmp):
    plan_path = os.path.join(tmp, f"plan-p{processes}.txtpb")
    with open(plan_path, "w") as f:
        f.write(plan_text(processes, args))
    runs, walls = [], []
    for i in range(args.invocations):
        wall, cases = run_once(args.fleetmark, plan_path, os.path.join(tmp, f"p{processes}-{i}.json"))
        runs.append(cases)
        walls.append(wall)
        print(f"  processes={processes} invocation {i + 1}/{args.invocations}: {wall:.1f} s",
              file=sys.stderr, flush=True)
    ids = sorted(set.intersection(*(set(r) for r in runs)))
    overlap = pairs = met = 0
    widths, shares, disagreeing = [], [], []
    for cid in ids:
        case_pairs = case_overlap = 0
        for a, b in itertools.combinations(runs, 2):
            lo_a, hi_a, lo_b, hi_b = a[cid][0], a[cid][1], b[cid][0], b[cid][1]
            case_pairs += 1
            case_overlap += lo_a <= hi_b and lo_b <= hi_a
        pairs += case_pairs
        overlap += case_overlap
        if case_overlap < case_pairs:
            disagreeing.append(f"{cid} ({case_pairs - case_overlap}/{case_pairs})")
        for r in runs:
            lo, hi, med, reason, share = r[cid]
            met += reason == "STOP_REASON_CI_TARGET"
            widths.append(100 * max(med - lo, hi - med) / med if med > 0 else float("inf"))
            shares.append(share)
    return {
        "processes": processes, "cases": len(ids), "pairs": pairs,
        "overlap_share": overlap / pairs if pairs else float("nan"),
        "met_target": met, "results": len(ids) * len(runs),
        "median_half_width_percent": statistics.median(widths) if widths else float("nan"),
        "median_between_share": statistics.median(shares) if shares else float("nan"),
        "wall_seconds_mean": statistics.mean(walls), "wall_seconds_total": sum(walls),
        "disagreeing": disagreeing,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fleetmark", required=True, help="the fleetmark CLI binary")
    parser.add_argument("--invocations", type=int, default=5)
    parser.add_argument("--target", type=float, default=2.0, help="target_ci_percent")
    parser.add_argument("--max-seconds", type=float, default=2.0, help="max_seconds_per_case")
    parser.add_argument("--warmup", type=float, default=0.1, help="warmup_seconds")
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 3])
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}", flush=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="fleetmark-ci-coverage-") as tmp:
        for p in args.processes:
            results.append(measure(p, args, tmp))
    print(f"load average after: {os.getloadavg()}")
    print(f"{args.invocations} invocations x 10 cases, target ±{args.target}%, "
          f"max {args.max_seconds} s/case, warm-up {args.warmup} s, 3 rounds")
    print("processes  overlapping pairs  met target  median ±%  median btw  wall/invocation")
    for r in results:
        print(f"{r['processes']:>9}  {r['overlap_share']:>8.0%} of {r['pairs']:<5}  "
              f"{r['met_target']:>4}/{r['results']:<5}  {r['median_half_width_percent']:>8.2f}%"
              f"  {r['median_between_share']:>9.0%}  {r['wall_seconds_mean']:>10.1f} s")
    for r in results:
        if r["disagreeing"]:
            print(f"processes={r['processes']}: non-overlapping pairs in " + ", ".join(r["disagreeing"]))
    if len(results) >= 2 and results[0]["wall_seconds_mean"] > 0:
        print(f"time cost: {results[-1]['wall_seconds_mean'] / results[0]['wall_seconds_mean']:.2f}x "
              f"(processes={results[-1]['processes']} vs processes={results[0]['processes']})")


if __name__ == "__main__":
    main()
