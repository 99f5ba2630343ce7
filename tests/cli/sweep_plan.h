// The small sweep plan of the CLI's map and recommend tests: `direct` and a 20-thread
// pool ("fixed_pool_io") on the synthetic workload (20 tasks of 2000 ns) at wait_us 0
// and 1000, quick measurement settings, the fewest processes (`processes: 1` is raised to 3);
// kSweepPlan3 measures each case in three processes (enough for a verdict) with a time
// budget that fits three of direct's ~120 ms processes at wait_us=1000 on a loaded host
// (at 0.3 s a case could end after two: provisional).
#pragma once

namespace fleetmark_cli_test {

inline constexpr char kSweepPlan[] =
    R"pb(name: "sweep"
         matrix {
           strategies { name: "direct" }
           strategies { name: "fixed_pool" threads: 20 label: "fixed_pool_io" }
           workloads: [ "synthetic" ]
           batch { tasks: 20 }
           synthetic { cpu_ns: 2000 }
           sweeps {
             param: "wait_us"
             values: [ 0, 1000 ]
           }
         }
         measurement { warmup_seconds: 0.01 min_repetitions: 6 max_seconds_per_case: 0.3 rounds: 1 processes: 1 }
    )pb";

inline constexpr char kSweepPlan3[] =
    R"pb(name: "sweep"
         matrix {
           strategies { name: "direct" }
           strategies { name: "fixed_pool" threads: 20 label: "fixed_pool_io" }
           workloads: [ "synthetic" ]
           batch { tasks: 20 }
           synthetic { cpu_ns: 2000 }
           sweeps {
             param: "wait_us"
             values: [ 0, 1000 ]
           }
         }
         measurement { warmup_seconds: 0.01 min_repetitions: 6 max_seconds_per_case: 1.5 rounds: 1 processes: 3 }
    )pb";

}  // namespace fleetmark_cli_test
