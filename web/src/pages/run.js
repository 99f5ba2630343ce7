// Run page: per group (scenario × workload × io mode × placement), one bar panel per
// device with strategies sorted by median and CI whiskers, a table of every metric,
// raw samples as a distribution on demand, and the memory / load scenario views.
import {ApiError, getJson} from '../api.js';
import {sharedBarAxis} from '../charts/axis.js';
import {drawBarsWithWhiskers} from '../charts/bars.js';
import {drawDistribution} from '../charts/distribution.js';
import {drawLoad, drawMemory} from '../charts/lines.js';
import {contendedMark} from '../contention.js';
import {h} from '../dom.js';
import {cliText, formatBytes, formatNs, formatNumber, formatTime, resultsText, shortId} from '../format.js';
import {groupBy, groupKey, groupLabel, hasTiming} from '../groups.js';
import {link, updateQuery} from '../router.js';
import {strategyColour} from '../strategy_colours.js';

function chartBox(attrs, height) {
  return h('div', {class: 'chart', style: `height:${height}px`, ...attrs});
}

// Every metric of the group's results, one row per result. Paired values share a
// column (min–max, CPU user/sys, allocations with their bytes) and the samples link
// sits next to the median, so the table fits a laptop screen; "throttled" appears
// only when some result was throttled. A result with no measurement (unsupported,
// failed, zero samples) shows "–" in every statistic and counter cell, never "0 – 0".
function metricTable(results) {
  const measured = (f) => (r) => (hasTiming(r) ? f(r) : '–');
  const counted = (f) => (r) => (r.counters && r.counters.repetitions > 0 ? f(r) : '–');
  const samplesLink = (r) => (r.stats.count > 0 ?
    h('button', {type: 'button', class: 'link', onclick: () => updateQuery({samples: r.result_id})},
      'distribution') : '–');
  const columns = [
    ['device', (r) => h('span', {class: 'device-name', title: r.agent_name}, r.agent_name)],
    ['strategy', (r) => [r.strategy, contendedMark(r)]],
    ['threads', (r) => cliText(r.threads_text), 'num'],
    ['status', (r) => r.status + (r.message ? `: ${r.message}` : '')],
    ['median', measured((r) => formatNs(r.stats.median_ns)), 'num'],
    ['95% CI', measured((r) => `${formatNs(r.stats.ci_low_ns)} – ${formatNs(r.stats.ci_high_ns)}`)],
    ['±%', measured((r) => formatNumber(r.stats.ci_half_width_percent, 2)), 'num'],
    ['samples', samplesLink],
    ['min – max', measured((r) => `${formatNs(r.stats.min_ns)} – ${formatNs(r.stats.max_ns)}`)],
    ['mean', measured((r) => formatNs(r.stats.mean_ns)), 'num'],
    ['stddev', measured((r) => formatNs(r.stats.stddev_ns)), 'num'],
    ['MAD', measured((r) => formatNs(r.stats.mad_ns)), 'num'],
    ['n', measured((r) => formatNumber(r.stats.count)), 'num'],
    ['outliers', measured((r) => formatNumber(r.stats.outliers)), 'num'],
    ['stopped by', measured((r) => r.stop_reason)],
    ['CPU/rep', (r) => cliText(r.cpu_per_rep_text), 'num'],
    ['allocations', counted((r) => `${formatNumber(r.counters.allocations)} (${formatBytes(r.counters.allocated_bytes)})`)],
    ['peak threads', counted((r) => formatNumber(r.counters.peak_threads)), 'num'],
    ['RSS delta', counted((r) => formatBytes(r.counters.rss_delta_bytes)), 'num'],
  ];
  if (results.some((r) => r.throttled)) columns.push(['throttled', (r) => (r.throttled ? 'yes' : '')]);
  // Measured under user-mode emulation (qemu-user): the emulator's numbers, not hardware's.
  if (results.some((r) => r.emulated)) columns.push(['emulated', (r) => (r.emulated ? 'emulated' : '')]);
  const sorted = [...results].sort((a, b) => a.agent_name.localeCompare(b.agent_name) ||
    (hasTiming(b) - hasTiming(a)) || (a.stats.median_ns - b.stats.median_ns));
  return h('div', {class: 'table-scroll'}, h('table', {class: 'grid metrics'},
    h('thead', {}, h('tr', {}, columns.map(([t]) => h('th', {}, t)))),
    h('tbody', {}, sorted.map((r) => h('tr', {dataset: {result: r.result_id}},
      columns.map(([, f, cls]) => h('td', cls ? {class: cls} : {}, f(r))))))));
}

function timingSection(key, results, agents, params) {
  const first = results[0];
  const panels = h('div', {class: 'panels'});
  const section = h('section', {class: 'group', dataset: {group: key}},
    h('h2', {}, groupLabel(first)), panels);
  const draws = [];
  // One value axis for all devices of the group (a µs bar stays visible beside ms ones).
  const axis = sharedBarAxis(results.filter(hasTiming).map((r) => ({value: r.stats.median_ns,
    low: r.stats.ci_low_ns, high: r.stats.ci_high_ns})), params.get('log'));
  agents.forEach((agent) => {
    const rows = results.filter((r) => r.agent_id === agent.agent_id && hasTiming(r))
      .sort((a, b) => a.stats.median_ns - b.stats.median_ns)
      .map((r) => ({label: r.strategy, value: r.stats.median_ns, low: r.stats.ci_low_ns, high: r.stats.ci_high_ns,
        color: strategyColour(r.strategy)}));
    if (rows.length === 0) return;
    const el = chartBox({dataset: {chart: 'bars', group: key, agent: agent.agent_id, axis: axis.log ? 'log' : 'linear'}},
      60 + rows.length * 26);
    panels.appendChild(h('div', {class: 'panel'}, h('h3', {}, agent.name), el));
    draws.push(() => drawBarsWithWhiskers(el, rows, {logScale: axis.log, min: axis.min, max: axis.max}));
  });
  section.appendChild(metricTable(results));
  return {section, draws};
}

function memorySection(key, results, agents) {
  const panels = h('div', {class: 'panels'});
  const section = h('section', {class: 'group', dataset: {group: key}},
    h('h2', {}, `${groupLabel(results[0])}: resident memory vs live tasks`), panels);
  const draws = [];
  for (const agent of agents) {
    const mine = results.filter((r) => r.agent_id === agent.agent_id);
    const curves = mine.filter((r) => r.memory).map((r) => ({
      name: r.strategy,
      slope: r.memory.slope_kib_per_task,
      intercept: r.memory.intercept_kib,
      r2: r.memory.r_squared,
      points: r.memory.points.filter((p) => p.status === 'ok')
        .map((p) => [p.tasks, (p.rss_bytes - p.baseline_rss_bytes) / 1024]),
    }));
    if (mine.length === 0) continue;
    const el = chartBox({dataset: {chart: 'memory', group: key, agent: agent.agent_id}}, 340);
    // Every row of the device, the ones that did not run too (their status, "–" metrics).
    // A slope fitted on the points that ran is an answer also when some point was left
    // out (slope_text names it: "12.34 (without 100000)"), as in the CLI table.
    const fit = (r) => (r.memory && r.slope_text && r.slope_text !== '-' ? r.memory : null);
    const rows = [...mine].sort((a, b) => (!!fit(b) - !!fit(a)) ||
      ((fit(a) ? fit(a).slope_kib_per_task : 0) - (fit(b) ? fit(b).slope_kib_per_task : 0)));
    const metric = (r, f) => (fit(r) ? f(fit(r)) : '–');
    const table = h('table', {class: 'grid small'},
      h('thead', {}, h('tr', {}, ['strategy', 'threads', 'KiB/task', 'intercept KiB', 'R²', 'status']
        .map((t) => h('th', {}, t)))),
      h('tbody', {}, rows.map((r) => h('tr', {dataset: {result: r.result_id}},
        h('td', {}, r.strategy), h('td', {class: 'num'}, cliText(r.threads_text)),
        h('td', {class: 'num'}, metric(r, () => cliText(r.slope_text))),
        h('td', {class: 'num'}, metric(r, (m) => m.intercept_kib.toFixed(0))),
        h('td', {class: 'num'}, metric(r, (m) => formatNumber(m.r_squared, 3))),
        h('td', {}, r.status + (r.message ? `: ${r.message}` : ''))))));
    panels.appendChild(h('div', {class: 'panel wide'}, h('h3', {}, agent.name), el, table));
    draws.push(() => drawMemory(el, curves));
  }
  return {section, draws};
}

function loadSection(key, results, agents, params) {
  const percentile = ['p50', 'p95', 'p99'].includes(params.get('pct')) ? params.get('pct') : 'p99';
  const panels = h('div', {class: 'panels'});
  const section = h('section', {class: 'group', dataset: {group: key}},
    h('h2', {}, `${groupLabel(results[0])}: latency and throughput vs users`),
    h('p', {class: 'controls'}, 'latency percentile:', ['p50', 'p95', 'p99'].map((p) => p === percentile ?
      h('b', {}, p) : h('button', {type: 'button', class: 'link', onclick: () => updateQuery({pct: p})}, p))),
    panels);
  const draws = [];
  for (const agent of agents) {
    const byStrategy = groupBy(results.filter((r) => r.agent_id === agent.agent_id && r.load), (r) => r.strategy);
    const curves = [...byStrategy.entries()].map(([name, rs]) => ({
      name,
      points: rs.map((r) => ({users: r.load.users, p50: r.load.latency_p50_ms, p95: r.load.latency_p95_ms,
        p99: r.load.latency_p99_ms, throughput: r.load.throughput_rps})).sort((a, b) => a.users - b.users),
    }));
    if (curves.length === 0) continue;
    const latency = chartBox({dataset: {chart: 'load-latency', group: key, agent: agent.agent_id}}, 300);
    const throughput = chartBox({dataset: {chart: 'load-throughput', group: key, agent: agent.agent_id}}, 300);
    panels.appendChild(h('div', {class: 'panel wide'}, h('h3', {}, agent.name),
      h('div', {class: 'pair'}, latency, throughput)));
    draws.push(() => drawLoad(latency, curves, percentile), () => drawLoad(throughput, curves, 'throughput'));
  }
  section.appendChild(loadTable(results));
  return {section, draws};
}

// Fan-out rows: the scenario's own metrics, as the CLI's fan-out table (total time of
// the R requests, successes, timeouts, failures, latency percentiles, peak threads);
// a case that did not run shows its status and "–" in every metric.
function fanoutSection(key, results) {
  const section = h('section', {class: 'group', dataset: {group: key}},
    h('h2', {}, `${groupLabel(results[0])}: fan-out requests`));
  const ran = (r) => r.status === 'ok' && r.fanout;
  const rows = [...results].sort((a, b) => a.agent_name.localeCompare(b.agent_name) || (ran(b) - ran(a)) ||
    ((ran(a) ? a.fanout.total_ms : 0) - (ran(b) ? b.fanout.total_ms : 0)) || a.strategy.localeCompare(b.strategy));
  const ms = (v) => formatNs(v * 1e6);
  const measured = (f) => (r) => (ran(r) ? f(r.fanout) : '–');
  const columns = [
    ['device', (r) => r.agent_name], ['strategy', (r) => r.strategy], ['threads', (r) => cliText(r.threads_text), 'num'],
    ['status', (r) => r.status + (r.message ? `: ${r.message}` : '')],
    ['total time', measured((f) => ms(f.total_ms)), 'num'],
    ['ok', measured((f) => formatNumber(f.successes)), 'num'],
    ['timeouts', measured((f) => formatNumber(f.timeouts)), 'num'],
    ['failures', measured((f) => formatNumber(f.failures)), 'num'],
    ['p50', measured((f) => ms(f.latency_p50_ms)), 'num'], ['p99', measured((f) => ms(f.latency_p99_ms)), 'num'],
    ['peak threads', measured((f) => formatNumber(f.peak_threads)), 'num'],
    ['peak RSS', measured((f) => formatBytes(f.peak_rss_bytes)), 'num'],
  ];
  section.appendChild(h('div', {class: 'table-scroll'}, h('table', {class: 'grid metrics fanout'},
    h('thead', {}, h('tr', {}, columns.map(([t]) => h('th', {}, t)))),
    h('tbody', {}, rows.map((r) => h('tr', {dataset: {result: r.result_id}},
      columns.map(([, f, cls]) => h('td', cls ? {class: cls} : {}, f(r)))))))));
  return {section, draws: []};
}

function loadTable(results) {
  const rows = results.filter((r) => r.load).sort((a, b) => a.agent_name.localeCompare(b.agent_name) ||
    a.strategy.localeCompare(b.strategy) || a.load.users - b.load.users);
  const ms = (v) => formatNumber(v, 3);
  // A load case that measured nothing (not ok) has no latencies: "–", never 0.
  const measured = (f) => (r) => (r.status === 'ok' ? f(r) : '–');
  const columns = [
    ['device', (r) => r.agent_name], ['strategy', (r) => r.strategy], ['users', (r) => formatNumber(r.load.users)],
    ['status', (r) => r.status + (r.message ? `: ${r.message}` : '')],
    ['req/s', measured((r) => formatNumber(r.load.throughput_rps, 4))],
    ['mean ms', measured((r) => ms(r.load.latency_mean_ms))],
    ['p50 ms', measured((r) => ms(r.load.latency_p50_ms))], ['p95 ms', measured((r) => ms(r.load.latency_p95_ms))],
    ['p99 ms', measured((r) => ms(r.load.latency_p99_ms))], ['max ms', measured((r) => ms(r.load.latency_max_ms))],
    ['requests', (r) => formatNumber(r.load.requests)],
    ['errors', (r) => formatNumber(r.load.errors_refused + r.load.errors_timeout + r.load.errors_5xx + r.load.errors_other)],
    ['peak RSS', (r) => formatBytes(r.load.peak_rss_bytes)], ['peak threads', (r) => formatNumber(r.load.peak_threads)],
  ];
  return h('div', {class: 'table-scroll'}, h('table', {class: 'grid metrics'},
    h('thead', {}, h('tr', {}, columns.map(([t]) => h('th', {}, t)))),
    h('tbody', {}, rows.map((r) => h('tr', {dataset: {result: r.result_id}}, columns.map(([, f]) => h('td', {}, f(r))))))));
}

// The stored conditions at the start and end of the case (what the preflight gates
// read): one row per condition, '–' where the snapshot did not know it.
function conditionsTable(r) {
  const dash = (v, f = (x) => x) => (v === null || v === undefined || v === '' ? '–' : f(v));
  const rows = [
    ['battery', (e) => dash(e.battery_level_percent, (v) => `${v} %${e.battery_charging ? ' charging' : ''}`)],
    ['battery temperature', (e) => dash(e.battery_temperature_c, (v) => `${v.toFixed(1)} °C`)],
    ['hottest zone', (e) => e.temperatures_c.length ? `${Math.max(...e.temperatures_c).toFixed(1)} °C` : '–'],
    ['load average (1 min)', (e) => dash(e.load_average_1m, (v) => v.toFixed(2))],
    ['free memory', (e) => dash(e.free_memory_bytes, (v) => `${Math.floor(v / 1048576)} MiB`)],
    ['governor', (e) => dash(e.governor)],
    ['other processes\' CPU', (e) => dash(e.other_cpu_percent, (v) => `${v.toFixed(1)} %`)],
    ['failed gates', (e) => e.gate_failures.length ? e.gate_failures.join('; ') : '–'],
    // Set but without a reading on the device: passed unchecked (older results: none).
    ['gates not checked', (e) => e.gates_not_checked && e.gates_not_checked.length ?
      e.gates_not_checked.join('; ') : '–'],
  ];
  return h('table', {class: 'grid', id: 'conditions-table'},
    h('thead', {}, h('tr', {}, ['condition', 'case start', 'case end'].map((t) => h('th', {}, t)))),
    h('tbody', {}, rows.map(([name, f]) => h('tr', {}, h('td', {}, name), h('td', {}, f(r.env_before)),
      h('td', {}, f(r.env_after))))));
}

async function samplesPanel(resultId) {
  const {result: r} = await getJson(`results/${encodeURIComponent(resultId)}`);
  const samples = r.samples_ns;
  const el = chartBox({dataset: {chart: 'distribution', result: resultId}}, 220);
  const c = r.counters;
  const section = h('section', {class: 'panel distribution'},
    h('h2', {}, `Raw samples (${samples.length}): `, `${r.agent_name} · ${r.strategy} · ${groupLabel(r)}`, ' ',
      h('button', {type: 'button', class: 'link', onclick: () => updateQuery({samples: null})}, 'close')),
    el,
    h('p', {class: 'muted small'}, `median ${formatNs(r.stats.median_ns)}, 95% CI ${formatNs(r.stats.ci_low_ns)} – ` +
      `${formatNs(r.stats.ci_high_ns)}; ${formatNumber(c.repetitions)} repetitions; context switches ` +
      `${formatNumber(c.voluntary_context_switches)} voluntary / ${formatNumber(c.involuntary_context_switches)} ` +
      `involuntary; CPUs used ${r.cpus_used.length ? r.cpus_used.join(',') : '–'}`));
  section.appendChild(conditionsTable(r));
  return {section, draws: [() => drawDistribution(el, samples)]};
}

function jobsSummary(run) {
  return h('div', {class: 'jobs'}, run.jobs.map((j) => h('span', {class: 'job'},
    j.agent_name, ' ', h('span', {class: `status ${j.status}`}, j.status), ` ${j.cases_done}/${j.cases_total}`)));
}

// An ambiguous run id prefix: the runs it matches, each a link to its page.
function renderMatches(root, prefix, error) {
  document.title = `Run ${prefix}… · fleetmark`;
  const matches = (error.body && error.body.matches) || [];
  root.appendChild(h('section', {class: 'ambiguous', dataset: {ambiguous: '1'}},
    h('h1', {}, `Run id prefix ${prefix} matches ${matches.length} runs`),
    h('p', {}, error.message),
    h('table', {class: 'grid', id: 'matches-table'},
      h('thead', {}, h('tr', {}, ['run', 'plan', 'status', 'submitted by', 'created'].map((t) => h('th', {}, t)))),
      h('tbody', {}, matches.map((r) => h('tr', {dataset: {run: r.run_id}},
        h('td', {}, link(`/runs/${encodeURIComponent(r.run_id)}`, r.run_id)), h('td', {}, r.plan_name),
        h('td', {}, h('span', {class: `status ${r.status}`}, r.status)), h('td', {}, r.submitted_by),
        h('td', {}, formatTime(r.created_unix_ms))))))));
}

export async function renderRun(root, params, runId) {
  let run;
  try {
    ({run} = await getJson(`runs/${encodeURIComponent(runId)}`));
  } catch (error) {
    if (error instanceof ApiError && error.status === 300) return renderMatches(root, runId, error);
    throw error;
  }
  // The full id from here on: a prefix resolved once names the same run in every request.
  const {results} = await getJson(`runs/${encodeURIComponent(run.run_id)}/results`);
  document.title = `Run ${shortId(run.run_id)} · fleetmark`;
  const agents = [...groupBy(results, (r) => r.agent_id).values()]
    .map((rs) => ({agent_id: rs[0].agent_id, name: rs[0].agent_name}))
    .sort((a, b) => a.name.localeCompare(b.name));
  const groups = groupBy(results, groupKey);
  const selected = params.get('group');

  root.appendChild(h('h1', {}, `Run ${shortId(run.run_id)}: `, run.plan_name));
  root.appendChild(h('p', {class: 'muted'},
    h('span', {class: `status ${run.status}`}, run.status),
    // Stored by `fleetmark results import` from a results file, not run by the fleet.
    run.imported ? h('span', {class: 'label', title: 'imported from a results file (fleetmark results import)'},
      'imported') : null,
    ` · submitted by ${run.submitted_by || '–'} · created ${formatTime(run.created_unix_ms)}` +
    ` · ${resultsText(run, results)}`));
  root.appendChild(jobsSummary(run));
  if (agents.length > 1) {
    root.appendChild(h('p', {}, link(`/compare?agents=${agents.map((a) => encodeURIComponent(a.agent_id)).join(',')}` +
      `&runs=${agents.map(() => encodeURIComponent(run.run_id)).join(',')}`, 'Compare these devices →')));
  }
  const controls = h('div', {class: 'controls'},
    h('label', {}, 'group ', h('select', {onchange: (e) => updateQuery({group: e.target.value})},
      h('option', {value: ''}, 'all'),
      [...groups.entries()].map(([key, rs]) => h('option', {value: key, selected: key === selected}, groupLabel(rs[0]))))),
    // auto: a log axis when a group's values span 10x or more (charts/axis.js).
    h('label', {}, 'scale ', h('select', {id: 'bar-scale', onchange: (e) => updateQuery({log: e.target.value})},
      [['', 'auto'], ['0', 'linear'], ['1', 'log']].map(([value, text]) =>
        h('option', {value, selected: (params.get('log') || '') === value}, text)))));
  root.appendChild(controls);

  const draws = [];
  const samplesId = params.get('samples');
  if (samplesId) {
    const panel = await samplesPanel(samplesId);
    root.appendChild(panel.section);
    draws.push(...panel.draws);
  }
  if (results.length === 0) root.appendChild(h('p', {}, 'No results yet.'));
  for (const [key, rs] of groups) {
    if (selected && key !== selected) continue;
    const scenario = rs[0].scenario;
    const part = scenario === 'memory' ? memorySection(key, rs, agents) :
      scenario === 'load' ? loadSection(key, rs, agents, params) :
        scenario === 'fanout' ? fanoutSection(key, rs) : timingSection(key, rs, agents, params);
    root.appendChild(part.section);
    draws.push(...part.draws);
  }
  for (const draw of draws) draw();
}
