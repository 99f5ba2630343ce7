// Map page: the strategy map of each chosen device (at a chosen run, default its
// newest), from /api/v1/map, which the coordinator computes with the same code as
// `fleetmark map` (engine/report/strategy_map): per group of a sweep, a heatmap over
// one or two swept parameters (leader by colour, points without a decided winner hatched
// and labelled by their kind, hover for the verdict, runner-up and paired ratio); the
// fixed workloads' verdicts in a table; and a
// chart of each crossover across the devices.
import {getJson} from '../api.js';
import {drawCrossover, drawStrategyMap, mapRatioText, paramsText} from '../charts/strategy_map.js';
import {contendedMark} from '../contention.js';
import {h} from '../dom.js';
import {formatNumber, shortId} from '../format.js';
import {agentIdsOf, listParam} from '../router.js';
import {strategySwatch} from '../strategy_colours.js';
import {deviceQuery, picker} from './compare.js';

function fixedText(fixed) {
  const text = paramsText(fixed || {});
  return text ? ` (${text})` : '';
}

// Every strategy of every map, in first-seen order (the legend; colours are the
// strategies' own, strategy_colours.js).
function strategiesOf(devices) {
  const out = [];
  for (const d of devices) {
    for (const p of d.map.points) {
      for (const e of p.ranked) if (!out.includes(e.strategy)) out.push(e.strategy);
    }
  }
  return out;
}

function legend(strategies) {
  return h('p', {class: 'legend small', id: 'map-legend'}, strategies.map((s) => h('span', {class: 'legend-item'},
    strategySwatch(s), ` ${s}  `)),
  h('span', {class: 'legend-item'}, h('span', {class: 'swatch tie-swatch'}),
    ' no decided winner (equivalent, undecided or provisional)'));
}

function fixedTable(points) {
  return h('table', {class: 'grid', 'data-table': 'fixed-workloads'},
    h('thead', {}, h('tr', {}, ['workload', 'leader', 'runner-up', 'paired ratio [95%]', 'verdict'].map((t) => h('th', {}, t)))),
    h('tbody', {}, points.map((p) => h('tr', {dataset: {group: p.group}},
      h('td', {}, p.group), h('td', {}, p.winner), h('td', {}, p.runner_up || '–'), h('td', {}, mapRatioText(p)),
      h('td', {}, p.verdict, p.ranked.map(contendedMark))))));
}

export async function renderMap(root, params) {
  document.title = 'Strategy map · fleetmark';
  const chosenRuns = (params.get('runs') || '').split(',');
  const [{agents}, {runs}] = await Promise.all([getJson('agents'), getJson('runs', {limit: 200})]);
  const chosen = agentIdsOf(listParam(params, 'agents'), agents);  // names or ids
  root.appendChild(h('h1', {}, 'Strategy map'));
  root.appendChild(h('p', {class: 'muted small'}, 'Which strategy is fastest at each measured point of a sweep, ' +
    'per device. A winner only when every other strategy was slower in every paired process round and ' +
    'its 95% interval over the processes lies beyond the device\'s margin; otherwise equivalent within the margin, ' +
    'undecided (with the reason) or provisional (fewer than 3 processes). ' +
    'The same map as `fleetmark map RUN`.'));
  root.appendChild(picker(agents, runs, chosen, chosenRuns));
  if (chosen.length === 0) {
    root.appendChild(h('p', {}, 'Pick one or more devices above.'));
    return;
  }
  const data = await getJson('map', deviceQuery(root, params, chosen, chosenRuns));
  const strategies = strategiesOf(data.devices);
  root.appendChild(legend(strategies));
  const draws = [];
  for (const device of data.devices) {
    const section = h('section', {dataset: {device: device.agent_id}},
      h('h2', {}, device.name, h('span', {class: 'muted small'}, device.run_id ? ` run ${shortId(device.run_id)}` : ' no results'),
        device.emulated_left_out > 0 ? h('span', {class: 'emulated'}, ` emulated: ${device.emulated_left_out} results left out`) : null));
    root.appendChild(section);
    const groups = [];
    for (const p of device.map.points) {
      let g = groups.find((x) => x.group === p.group);
      if (!g) groups.push(g = {group: p.group, points: []});
      g.points.push(p);
    }
    const swept = groups.filter((g) => g.points[0].swept.length > 0);
    const fixed = groups.filter((g) => g.points[0].swept.length === 0).map((g) => g.points[0]);
    if (groups.length === 0) section.appendChild(h('p', {}, 'No batch case measured ok: nothing to map.'));
    const panels = h('div', {class: 'panels'});
    section.appendChild(panels);
    for (const g of swept) {
      const ys = g.points[0].swept.length > 1 ? new Set(g.points.map((p) => p.point[g.points[0].swept[1]])).size : 1;
      const el = h('div', {class: 'chart', style: `height:${90 + ys * 44}px`,
        dataset: {chart: 'strategy-map', agent: device.agent_id, group: g.group}});
      panels.appendChild(h('div', {class: 'panel'}, h('h3', {}, g.group, h('span', {class: 'muted small'},
        `  swept: ${g.points[0].swept.join(', ')}`)), el));
      draws.push(() => drawStrategyMap(el, g.points));
    }
    if (fixed.length > 0) section.appendChild(h('div', {class: 'table-scroll'}, fixedTable(fixed)));
  }
  if (data.crossovers.length > 0) {
    const section = h('section', {id: 'crossovers'}, h('h2', {}, 'Crossovers across devices'),
      h('p', {class: 'muted small'}, 'Where the winner changes along a swept parameter: between the last point ' +
        'the first strategy won and the first point the second did (ties in between are inside); ' +
        '● the estimate, where the two medians cross (interpolated on a log scale).'));
    root.appendChild(section);
    for (const c of data.crossovers) {
      const sentence = `${c.to} overtakes ${c.from} at ` + c.devices.map((d) =>
        `~${formatNumber(Math.round(d.estimate))} ${c.param} on ${d.name}`).join(', ');
      const el = h('div', {class: 'chart', style: `height:${80 + c.devices.length * 40}px`,
        dataset: {chart: 'crossover', param: c.param, from: c.from, to: c.to}});
      section.appendChild(h('div', {class: 'panel'}, h('h3', {}, `${c.group}: ${c.from} → ${c.to} along ${c.param}`,
        fixedText(c.fixed)), h('p', {class: 'crossover-sentence'}, sentence), el));
      draws.push(() => drawCrossover(el, c));
    }
  }
  for (const draw of draws) draw();
}
