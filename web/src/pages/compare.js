// Compare page: one or more devices (each at a chosen run; default the newest run they
// all share, else each one's newest: the API's rule). First
// the answer: per workload (and sweep point) per device the verdict of the one rule
// (engine/measure/verdict.h: decided, equivalent, undecided, provisional); the memory /
// fan-out / load cases by their metrics per device; unsupported cases in one line; with
// ?cases=A,B the fleet A/B of two cases. Then strategy × workload heatmaps normalised to
// each device's fastest strategy on one shared colour scale, and a table with the winning device per cell (the same
// rule over the devices' processes), the ratio A/B with its CI, the verdict's kind where
// no device is decided faster, and a geometric-mean row per workload (never over
// unrelated workloads); contended cases carry the ⚠ marker. The numbers come from
// /api/v1/compare.
import {ApiError, getJson} from '../api.js';
import {drawNormalizedHeatmap, sharedMaxLog} from '../charts/heatmap.js';
import {contendedMark} from '../contention.js';
import {h} from '../dom.js';
import {formatNs, formatRatio, shortId} from '../format.js';
import {agentIdsOf, listParam, runMatches, updateQuery} from '../router.js';
import {strategySwatch} from '../strategy_colours.js';

// The device picker (shared with the Map page): chosen devices first, in their letter
// order (A, B, ...), then the others; each with its run (default its newest).
export function picker(agents, runs, chosen, chosenRuns) {
  const rank = (agent) => (chosen.includes(agent.agent_id) ? chosen.indexOf(agent.agent_id) : chosen.length);
  const ordered = [...agents].sort((a, b) => rank(a) - rank(b));
  const rows = ordered.map((agent) => {
    const index = chosen.indexOf(agent.agent_id);
    const agentRuns = runs.filter((r) => r.jobs.some((j) => j.agent_id === agent.agent_id));
    const runSelect = h('select', {
      disabled: index < 0,
      onchange: (e) => {
        const next = chosen.map((id, i) => (i === index ? e.target.value : (chosenRuns[i] || '')));
        updateQuery({runs: next.some((x) => x) ? next.join(',') : null});
      },
    }, h('option', {value: ''}, chosen.length > 1 ? 'newest shared run' : 'newest run'), agentRuns.map((r) => h('option',
      {value: r.run_id, selected: index >= 0 && runMatches(r.run_id, chosenRuns[index])},
      `${shortId(r.run_id)} ${r.plan_name}`)));
    const box = h('input', {type: 'checkbox', checked: index >= 0, onchange: (e) => {
      const ids = [...chosen];
      const rs = chosen.map((_, i) => chosenRuns[i] || '');
      if (e.target.checked) {
        ids.push(agent.agent_id);
        rs.push('');
      } else {
        ids.splice(index, 1);
        rs.splice(index, 1);
      }
      updateQuery({agents: ids.join(','), runs: rs.some((x) => x) ? rs.join(',') : null});
    }});
    return h('label', {class: 'pick'}, box, ' ', index >= 0 ? h('b', {}, `${String.fromCharCode(65 + index)}: `) : null,
      agent.name, ' ', runSelect);
  });
  return h('div', {class: 'picker'}, rows);
}

// The query of /api/v1/compare and /api/v1/map for the chosen devices and runs, after
// adding the "include results measured under emulation" checkbox to `root` (results
// measured under emulation, qemu-user, are left out unless it is ticked).
export function deviceQuery(root, params, chosen, chosenRuns) {
  const runParam = chosenRuns.some((r) => r) ? chosen.map((_, i) => chosenRuns[i] || '').join(',') : undefined;
  const includeEmulated = params.get('include_emulated') === '1';
  root.appendChild(h('label', {class: 'pick'}, h('input', {type: 'checkbox', id: 'include-emulated',
    checked: includeEmulated, onchange: (e) => updateQuery({include_emulated: e.target.checked ? '1' : null})}),
  ' include results measured under emulation (the emulator\'s numbers, not hardware numbers)'));
  return {agents: chosen.join(','), runs: runParam, include_emulated: includeEmulated ? '1' : undefined};
}

// The ratio with its interval, or alone when a side has no CI (never "[0.00×–∞]").
function ratioText(ratio) {
  if (!(ratio.low > 0) || !Number.isFinite(ratio.high)) return formatRatio(ratio.ratio);
  return `${formatRatio(ratio.ratio)} [${formatRatio(ratio.low)}–${formatRatio(ratio.high)}]`;
}

function compareTable(data) {
  const {devices, workloads, strategies} = data;
  const cellOf = new Map(data.cells.map((c) => [`${c.strategy}\u0000${c.workload}`, c]));
  const letter = (i) => String.fromCharCode(65 + i);
  const head = h('tr', {}, h('th', {}, 'strategy'), workloads.map((w) => h('th', {}, w.label)));
  const body = strategies.map((strategy) => h('tr', {},
    h('th', {class: 'rowhead'}, strategySwatch(strategy), ' ', strategy),
    workloads.map((w) => {
      const cell = cellOf.get(`${strategy}\u0000${w.key}`);
      if (!cell) return h('td', {class: 'empty'}, '–');
      const present = cell.values.filter((v) => v).length;
      const winner = cell.winner >= 0 ? devices[cell.winner] : null;
      const ratios = cell.ratios.map((r, i) => (r ? h('div', {class: 'ratio'},
        `${letter(0)}/${letter(i)} ${ratioText(r)}`) : null));
      let verdict;
      if (present < 2) verdict = h('div', {class: 'muted'}, `only ${present ? devices[cell.values.findIndex((v) => v)].name : 'none'}`);
      else if (cell.no_difference) verdict = h('div', {class: 'nodiff-label', title: cell.reason}, cell.verdict);
      else verdict = h('div', {class: 'winner'}, `${letter(cell.winner)} wins: `, winner.name);
      const contended = cell.values.map((v, i) => (v && v.contended ? h('div', {class: 'small'},
        contendedMark(v), ` ${letter(i)} contended`) : null));
      return h('td', {
        class: cell.no_difference ? 'cell nodiff' : 'cell',
        dataset: {strategy, workload: w.key, winner: winner && !cell.no_difference ? winner.agent_id : 'none'},
        title: cell.values.map((v, i) => `${letter(i)}: ${v ? formatNs(v.median_ns) : '–'}`).join('\n'),
      }, verdict, ratios, contended);
    })));
  const geo = h('tr', {class: 'geomean'}, h('th', {class: 'rowhead'}, 'geometric mean'),
    workloads.map((w) => {
      const g = data.geomean.find((x) => x.workload === w.key);
      return h('td', {dataset: {workload: w.key}}, g ? g.ratios.map((r, i) => (r ? h('div',
        {class: r.no_difference ? 'ratio nodiff-label' : 'ratio'},
        `${letter(0)}/${letter(i)} ${ratioText(r)}${r.no_difference ? ' (no difference)' : ''}`) : null)) : '–');
    }));
  return [
    h('div', {class: 'table-scroll'}, h('table', {class: 'grid compare', id: 'compare-table'},
      h('thead', {}, head), h('tbody', {}, body, geo))),
  ];
}

// The answer per workload / sweep point (rows) and device (columns).
function answersSection(data) {
  const answers = data.answers;
  const parts = [h('h2', {}, 'Best strategy per workload and device')];
  parts.push(h('p', {class: 'muted small'}, 'A winner only when every other strategy was slower in every paired ' +
    `process round and its 95% interval lies beyond the margin (at least ${(answers.min_margin * 100).toFixed(1)}%, ` +
    'more on a noisy device); fewer than 3 processes are provisional, never a winner.'));
  if (answers.points.length) {
    parts.push(h('div', {class: 'table-scroll'}, h('table', {class: 'grid', id: 'compare-answers'},
      h('thead', {}, h('tr', {}, h('th', {}, 'workload / point'), data.devices.map((d) => h('th', {}, d.name)))),
      h('tbody', {}, answers.points.map((p) => h('tr', {dataset: {point: p.point}}, h('th', {class: 'rowhead'}, p.point),
        p.devices.map((d) => h('td', {class: d && !d.tie && d.ranked.length > 1 ? 'answer winner' : 'answer',
          dataset: {winner: d && !d.tie && d.ranked.length > 1 ? d.winner : 'none'}}, d ? d.answer : '–'))))))));
  }
  if (answers.scenarios.length) {
    parts.push(h('h3', {}, 'Memory (KiB/task), fan-out (total time, timeouts), load (throughput, p99, peak RSS)'));
    parts.push(h('div', {class: 'table-scroll'}, h('table', {class: 'grid', id: 'compare-scenarios'},
      h('thead', {}, h('tr', {}, h('th', {}, 'case'), data.devices.map((d) => h('th', {}, d.name)))),
      h('tbody', {}, answers.scenarios.map((row) => h('tr', {dataset: {case: row.case_id}},
        h('th', {class: 'rowhead'}, row.case_id), row.devices.map((d) => h('td', {class: 'num'}, d ? d.text : '–'))))))));
  }
  const unsupported = answers.unsupported;
  if (unsupported.cases > 0) {
    parts.push(h('p', {class: 'muted', id: 'compare-unsupported'},
      `Unsupported: ${unsupported.cases} case${unsupported.cases === 1 ? '' : 's'} of strategies ` +
      `${unsupported.strategies.join(', ')}`));
  }
  return h('section', {}, parts);
}

// ?cases=A,B: B against A on every device, and the fleet summary.
function abSection(ab) {
  const fmt = (r, lo, hi) => (r === null ? '–'
    : (lo === null || hi === null || lo <= 0 ? formatRatio(r) : `${formatRatio(r)} [${formatRatio(lo)}–${formatRatio(hi)}]`));
  const f = ab.fleet;
  return h('section', {id: 'compare-ab'}, h('h2', {}, 'A/B of two cases'),
    h('p', {}, 'A = ', h('code', {}, ab.a), ', B = ', h('code', {}, ab.b), '; B/A < 1: B is faster.'),
    h('table', {class: 'grid'}, h('thead', {}, h('tr', {}, ['device', 'B/A [95% CI]', 'B is', 'method'].map((x) => h('th', {}, x)))),
      h('tbody', {}, ab.devices.map((d) => h('tr', {dataset: {verdict: d.verdict}}, h('td', {}, d.device),
        h('td', {class: 'num'}, fmt(d.ratio, d.ratio_low, d.ratio_high)), h('td', {}, d.verdict), h('td', {}, d.method))))),
    h('p', {class: 'fleet-ab'}, `Fleet: B is faster on ${f.faster}, slower on ${f.slower}, ` +
      `equivalent on ${f.equivalent}, undecided on ${f.undecided}` +
      (f.devices > 0 ? `; geometric-mean B/A ${fmt(f.ratio, f.ratio_low, f.ratio_high)} over ${f.devices} devices` : '')));
}

// The controls of the answer: the minimum margin (percent; ?min_margin= as a fraction)
// and the A/B of two cases (?cases=A,B: case ids, or whole '/'-separated parts of exactly
// one case id, as `fleetmark compare RUN --cases A,B` takes them).
function controls(params, minMargin) {
  const [a, b] = (params.get('cases') || '').split(',');
  const margin = h('input', {type: 'number', id: 'min-margin', min: '0', max: '50', step: '0.5',
    value: String(Math.round(minMargin * 1000) / 10)});
  const caseA = h('input', {type: 'text', id: 'case-a', size: '34', value: a || '',
    placeholder: 'case A, e.g. storage/blocking/fixed_pool'});
  const caseB = h('input', {type: 'text', id: 'case-b', size: '34', value: b || '',
    placeholder: 'case B, e.g. storage/blocking/work_stealing'});
  const apply = h('button', {type: 'submit', id: 'compare-apply'}, 'Apply');
  const clear = h('button', {type: 'button', id: 'compare-clear-ab', disabled: !params.get('cases'),
    onclick: () => updateQuery({cases: null})}, 'No A/B');
  return h('form', {class: 'controls', id: 'compare-controls', onsubmit: (e) => {
    e.preventDefault();
    const percent = Number(margin.value);
    const ab = caseA.value.trim() && caseB.value.trim() ? `${caseA.value.trim()},${caseB.value.trim()}` : null;
    updateQuery({min_margin: Number.isFinite(percent) && percent !== 2 ? String(percent / 100) : null, cases: ab});
  }}, h('label', {}, 'minimum margin for a winner ', margin, ' %'), '  ',
  h('label', {}, 'A/B: ', caseA, ' vs ', caseB), ' ', apply, ' ', clear);
}

// What differs between the devices besides the strategy (CPU, kernel, governor, ...):
// the fingerprint fields the server found different, one column per device.
function fingerprintSection(data) {
  const rows = data.fingerprint_differences || [];
  const unknown = data.devices.filter((d) => !d.fingerprint).map((d) => d.name);
  return h('section', {}, h('h2', {}, 'Device fingerprint'),
    unknown.length ? h('p', {class: 'muted small'}, `No fingerprint (an older agent): ${unknown.join(', ')}.`) : null,
    rows.length ? h('table', {class: 'grid', id: 'fingerprint-diff'},
      h('thead', {}, h('tr', {}, h('th', {}, 'field'),
        data.devices.map((d, i) => h('th', {}, `${String.fromCharCode(65 + i)}: `, d.name)))),
      h('tbody', {}, rows.map((r) => h('tr', {}, h('td', {}, r.field), r.values.map((v) => h('td', {}, v || '?'))))))
      : h('p', {}, 'The same on every device.'));
}

export async function renderCompare(root, params) {
  document.title = 'Compare · fleetmark';
  const chosenRuns = (params.get('runs') || '').split(',');
  const [{agents}, {runs}] = await Promise.all([getJson('agents'), getJson('runs', {limit: 200})]);
  const chosen = agentIdsOf(listParam(params, 'agents'), agents);  // names or ids
  root.appendChild(h('h1', {}, 'Compare devices'));
  root.appendChild(picker(agents, runs, chosen, chosenRuns));
  if (chosen.length === 0) {
    root.appendChild(h('p', {}, 'Pick one or more devices above.'));
    return;
  }
  const query = deviceQuery(root, params, chosen, chosenRuns);
  if (params.get('cases')) query.cases = params.get('cases');
  if (params.get('min_margin')) query.min_margin = params.get('min_margin');
  // A bad A/B (no such case, ambiguous) is said under the form, which keeps what was
  // typed; the rest of the page is answered without it.
  let data;
  let abError = null;
  try {
    data = await getJson('compare', query);
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 400 || !query.cases) throw error;
    abError = error.message;
    delete query.cases;
    data = await getJson('compare', query);
  }
  const {devices, workloads, strategies} = data;
  const emulatedNote = (d) => {
    if (d.emulated_left_out > 0) return h('span', {class: 'emulated'}, ` emulated: ${d.emulated_left_out} results left out`);
    return d.emulated ? h('span', {class: 'emulated'}, ' (emulated)') : null;
  };
  root.appendChild(h('p', {class: 'muted'}, devices.map((d, i) => h('span', {class: 'device', dataset: {emulated: d.emulated ? '1' : '0'}},
    h('b', {}, `${String.fromCharCode(65 + i)}: `), d.name, ` (run ${shortId(d.run_id)})`, emulatedNote(d), '  '))));
  // Devices that are one machine (same machine id and boot id), as `fleetmark compare` says.
  for (const note of data.one_machine || []) root.appendChild(h('p', {class: 'one-machine'}, note));
  root.appendChild(controls(params, data.answers.min_margin));
  if (abError) root.appendChild(h('p', {class: 'error', id: 'compare-ab-error'}, `A/B: ${abError}`));
  if (data.ab) root.appendChild(abSection(data.ab));
  root.appendChild(answersSection(data));
  if (devices.length > 1) root.appendChild(fingerprintSection(data));
  if (strategies.length === 0) {
    if (!data.answers.scenarios.length) root.appendChild(h('p', {}, 'No timed results for these devices.'));
    return;
  }
  const heatmaps = h('div', {class: 'panels'});
  root.appendChild(h('section', {}, h('h2', {}, 'Time relative to each device\'s fastest strategy'),
    h('p', {class: 'muted small'}, 'One colour scale for every device: one value, one colour.'), heatmaps));
  const draws = [];
  const cellOf = new Map(data.cells.map((c) => [`${c.strategy}\u0000${c.workload}`, c]));
  const valueOfs = devices.map((_, index) => (strategy, key) => {
    const c = cellOf.get(`${strategy}\u0000${key}`);
    return c ? c.values[index] : null;
  });
  const maxLog = sharedMaxLog(strategies, workloads, valueOfs);
  devices.forEach((device, index) => {
    const el = h('div', {class: 'chart', style: `height:${110 + strategies.length * 30}px`,
      dataset: {chart: 'heatmap', agent: device.agent_id}});
    heatmaps.appendChild(h('div', {class: 'panel'}, h('h3', {}, `${String.fromCharCode(65 + index)}: `, device.name), el));
    draws.push(() => drawNormalizedHeatmap(el, strategies, workloads, valueOfs[index], {maxLog}));
  });
  if (devices.length > 1) {
    root.appendChild(h('section', {}, h('h2', {}, 'Winner per cell and ratio of medians'),
      h('p', {class: 'muted small'}, 'Ratio A/X = median of A ÷ median of X; the interval combines both ' +
        'medians\' 95% CIs. The winning device is the one verdict rule\'s over the devices\' processes; ' +
        'otherwise the cell says equivalent, undecided or provisional (hover for the reason).'), compareTable(data)));
  }
  for (const draw of draws) draw();
}
