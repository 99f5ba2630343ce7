// A host's core classes as text, the rule of the CLI's host summary
// (engine/topology/host_text.cc FormatHostSummary): pure, no DOM (the Fleet page and
// tests/web/page_text_test.mjs use it).

// One class: "performance: 6 × 2T IntelCore @ 4.70 GHz"; "5 cores, 12 threads" when
// cores × threads would overcount (SMT off or not allowed on some cores); ", 4 of 12
// machine CPUs allowed" when an affinity or cpuset leaves some out; a class with no CPU
// the agent may use "efficiency: not available here (8 machine CPUs, none allowed)",
// never "0 × 1T". Hosts recorded before machine_cpus have cpus only.
export function coreClassText(k) {
  const cpus = Array.isArray(k.cpus) ? k.cpus.length : null;
  const machine = Array.isArray(k.machine_cpus) ? k.machine_cpus.length : 0;
  if (cpus === 0 || (cpus === null && !k.cores)) {
    const seen = machine > 0 ? ` (${machine} machine CPU${machine === 1 ? '' : 's'}, none allowed)` : '';
    return `${k.name}: not available here${seen}`;
  }
  const threads = k.threads_per_core || 1;
  const shape = cpus === null || k.cores * threads === cpus ? `${k.cores} × ${threads}T` :
    `${k.cores} cores, ${cpus} threads`;
  const allowed = cpus !== null && machine > cpus ? `, ${cpus} of ${machine} machine CPUs allowed` : '';
  const arch = k.microarchitecture ? ` ${k.microarchitecture}` : '';
  const freq = k.max_frequency_khz ? ` @ ${(k.max_frequency_khz / 1e6).toFixed(2)} GHz` : '';
  return `${k.name}: ${shape}${arch}${freq}${allowed}`;
}

// Every class of `host` (its core_classes, else hwloc's core_kinds) joined by " · ";
// "–" when it has none.
export function coreClassesText(host) {
  const kinds = (host.core_classes && host.core_classes.length ? host.core_classes : host.core_kinds) || [];
  return kinds.length === 0 ? '–' : kinds.map(coreClassText).join(' · ');
}
