// History page: one case's median over runs per device (nightly runs only on request),
// with the change points the server detected marked on the line, and the coordinator's
// confirmed changes (suspected, confirmed, not reproduced, unconfirmed) on their points.
import {ApiError, getJson} from '../api.js';
import {drawHistory} from '../charts/lines.js';
import {h} from '../dom.js';
import {formatNs, formatTime, shortId} from '../format.js';
import {agentIdsOf, link, listParam, updateQuery} from '../router.js';

export async function renderHistory(root, params) {
  document.title = 'History · fleetmark';
  const caseId = params.get('case') || '';
  const nightly = params.get('nightly') === '1';
  const {agents} = await getJson('agents');
  const chosen = agentIdsOf(listParam(params, 'agents'), agents);  // names or ids
  root.appendChild(h('h1', {}, 'History'));
  const boxes = agents.map((a) => h('label', {class: 'pick'}, h('input', {
    type: 'checkbox', checked: chosen.includes(a.agent_id), onchange: (e) => {
      const next = e.target.checked ? [...chosen, a.agent_id] : chosen.filter((id) => id !== a.agent_id);
      updateQuery({agents: next.join(',')});
    }}), ' ', a.name));
  root.appendChild(h('div', {class: 'picker'}, boxes));
  if (chosen.length === 0) {
    root.appendChild(h('p', {}, 'Pick one or more devices above.'));
    return;
  }
  let caseIds = [];
  try {
    // Every case with a result of any chosen device, in any run (not only the newest).
    ({case_ids: caseIds} = await getJson('cases', {agents: chosen.join(',')}));
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;  // no results yet
  }
  if (caseId && !caseIds.includes(caseId)) caseIds = [caseId, ...caseIds];
  root.appendChild(h('div', {class: 'controls'},
    h('label', {}, 'case ', h('select', {onchange: (e) => updateQuery({case: e.target.value})},
      h('option', {value: ''}, 'pick a case'),
      caseIds.map((id) => h('option', {value: id, selected: id === caseId}, id)))),
    h('label', {}, h('input', {type: 'checkbox', checked: nightly,
      onchange: (e) => updateQuery({nightly: e.target.checked})}), ' scheduled (nightly) runs only')));
  if (!caseId) {
    root.appendChild(h('p', {}, 'Pick a case.'));
    return;
  }
  const data = await getJson('history', {case: caseId, agents: chosen.join(','), nightly: nightly ? 1 : 0});
  root.appendChild(h('p', {class: 'muted small'}, `Change points: ${data.method}`));
  const emulated = data.series.filter((s) => s.points.some((p) => p.emulated)).map((s) => s.name);
  if (emulated.length) {
    root.appendChild(h('p', {class: 'warning', id: 'history-emulated'},
      `Measured under emulation (not the device's own speed): some points of ${emulated.join(', ')}.`));
  }
  // The coordinator's changes of this case on the chosen devices (GET /api/v1/changes).
  let allChanges = [];
  try {
    ({changes: allChanges} = await getJson('changes', {limit: 1000}));
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;  // the chart does not need them
  }
  const confirmedChanges = allChanges.filter((c) => c.case_id === caseId && chosen.includes(c.agent_id));
  const series = data.series.map((s) => ({
    name: s.name,
    changes: s.change_points,
    states: confirmedChanges.filter((c) => c.agent_id === s.agent_id)
      .map((c) => ({index: s.points.findIndex((p) => p.run_id === c.run_id), state: c.state, id: c.change_id}))
      .filter((m) => m.index >= 0),
    events: s.fingerprint_changes,
    points: s.points.map((p) => ({t_ms: p.finished_unix_ms, median_ns: p.median_ns,
      ci_low_ns: p.ci_low_ns, ci_high_ns: p.ci_high_ns, run_id: p.run_id})),
  }));
  const el = h('div', {class: 'chart', style: 'height:360px', dataset: {chart: 'history'}});
  root.appendChild(h('section', {class: 'panel wide'}, h('h2', {}, caseId), el));
  const rows = [];
  for (const s of data.series) {
    for (const index of s.change_points) {
      const p = s.points[index];
      const before = s.points[index - 1];
      rows.push(h('tr', {}, h('td', {}, s.name), h('td', {}, formatTime(p.finished_unix_ms)),
        h('td', {}, link(`/runs/${encodeURIComponent(p.run_id)}`, shortId(p.run_id))),
        h('td', {class: 'num'}, before ? formatNs(before.median_ns) : '–'),
        h('td', {class: 'num'}, formatNs(p.median_ns))));
    }
  }
  root.appendChild(h('section', {}, h('h2', {}, 'Detected changes'),
    h('p', {class: 'muted'}, 'Change points of the series shown (at least 2 runs on each side of a change).'),
    rows.length ?
    h('table', {class: 'grid', id: 'changes-table'},
      h('thead', {}, h('tr', {}, ['device', 'run submitted', 'run', 'median before', 'median after'].map((t) => h('th', {}, t)))),
      h('tbody', {}, rows)) : h('p', {}, 'None.')));
  const stateRows = confirmedChanges.map((c) => h('tr', {dataset: {state: c.state}},
    h('td', {class: 'num'}, String(c.change_id)), h('td', {}, c.agent),
    h('td', {}, formatTime(c.created_unix_ms)),
    h('td', {}, link(`/runs/${encodeURIComponent(c.run_id)}`, shortId(c.run_id))),
    h('td', {class: 'num'}, c.old_level), h('td', {class: 'num'}, c.new_level),
    h('td', {}, c.state.replace('_', ' ')),
    h('td', {}, c.confirmation_run_id ?
      link(`/runs/${encodeURIComponent(c.confirmation_run_id)}`, shortId(c.confirmation_run_id)) : '–'),
    h('td', {class: 'small'}, c.reason || '–')));
  root.appendChild(h('section', {}, h('h2', {}, 'Confirmed changes'),
    h('p', {class: 'muted'}, 'Changes the coordinator found when a nightly run ended (its newest point alone can ' +
      'start one) and re-measured with a confirmation run: confirmed, not reproduced or unconfirmed. A change ' +
      'confirmed here may not be a change point above until a second run stays at the new level.'),
    stateRows.length ?
    h('table', {class: 'grid', id: 'confirmed-changes'},
      h('thead', {}, h('tr', {}, ['id', 'device', 'found', 'nightly run', 'old level', 'new level', 'state',
        'confirmation run', 'reason'].map((t) => h('th', {}, t)))),
      h('tbody', {}, stateRows)) :
    h('p', {}, 'None: no nightly point of this case started a change the coordinator checked.')));
  // Device fingerprint changes: each starts a new segment (change points are searched
  // within segments), so an OS update is not mistaken for a regression of the strategy.
  const events = [];
  for (const s of data.series) {
    for (const e of s.fingerprint_changes) {
      const p = s.points[e.index];
      events.push(h('tr', {}, h('td', {}, s.name), h('td', {}, formatTime(p.finished_unix_ms)),
        h('td', {}, link(`/runs/${encodeURIComponent(p.run_id)}`, shortId(p.run_id))),
        h('td', {}, e.text)));
    }
  }
  root.appendChild(h('section', {}, h('h2', {}, 'Device changes'), events.length ?
    h('table', {class: 'grid', id: 'fingerprint-events'},
      h('thead', {}, h('tr', {}, ['device', 'run submitted', 'run', 'what changed'].map((t) => h('th', {}, t)))),
      h('tbody', {}, events)) : h('p', {}, 'None: every device kept its fingerprint.')));
  drawHistory(el, series);
}
