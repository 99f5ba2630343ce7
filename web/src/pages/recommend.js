// Recommend page: "which strategy for a task like mine, on each device?". A profile form
// (cpu_us, wait_us, any other key=value terms; the run or plan to answer from, default
// the newest done run with batch results) and, per device, the answer of
// /api/v1/recommend, which the coordinator computes with the code of `fleetmark
// recommend --format json` (engine/report/recommend.h): the one-sentence answer, the
// measured points around the profile with their verdict kind, paired ratio with its
// interval and margin, and the conditions they rest on (contended cases, quick mode,
// other processes' CPU share). Bad input is answered under the form, which stays.
import {ApiError, getJson} from '../api.js';
import {mapRatioText, paramsText} from '../charts/strategy_map.js';
import {contendedMark} from '../contention.js';
import {clear, h} from '../dom.js';
import {shortId} from '../format.js';
import {strategySwatch} from '../strategy_colours.js';

// "cpu_us=50,wait_us=2000,alloc_kib=4" -> {cpu: '50', wait: '2000', other: 'alloc_kib=4'}
// (only to fill the form back in; the server parses and checks the profile).
function splitProfile(text) {
  const out = {cpu: '', wait: '', other: []};
  for (const term of (text || '').split(',').map((t) => t.trim()).filter((t) => t)) {
    const [key, ...value] = term.split('=');
    if (key.trim() === 'cpu_us' && !out.cpu) out.cpu = value.join('=').trim();
    else if (key.trim() === 'wait_us' && !out.wait) out.wait = value.join('=').trim();
    else out.other.push(term);
  }
  return {...out, other: out.other.join(',')};
}

function joinProfile(cpu, wait, other) {
  return [cpu.trim() && `cpu_us=${cpu.trim()}`, wait.trim() && `wait_us=${wait.trim()}`, other.trim()]
    .filter((t) => t).join(',');
}

// The verdict's kind as a reader needs it: "equivalent within 2.0 %" names the margin.
function kindText(p) {
  return p.kind === 'equivalent' ? `equivalent within ${(p.margin * 100).toFixed(1)} %` : p.kind;
}

// The conditions of one measured point: its contended strategies and quick ones.
function pointConditions(p) {
  const contended = p.ranked.filter((e) => e.contended);
  const quick = p.ranked.some((e) => e.quick);
  const parts = contended.map((e) => h('span', {class: 'condition'}, contendedMark(e), ` ${e.strategy} contended`));
  if (quick) parts.push(h('span', {class: 'condition quick'}, 'quick mode'));
  return parts.length ? parts : '–';
}

function pointsTable(answer) {
  return h('table', {class: 'grid recommend-points'},
    h('thead', {}, h('tr', {}, ['measured point', 'verdict', 'leader', 'runner-up', 'paired ratio [95%]', 'margin',
      'conditions'].map((t) => h('th', {}, t)))),
    h('tbody', {}, answer.points.map((p) => {
      const resting = p.ranked.some((e) => e.contended);
      return h('tr', {dataset: {kind: p.kind, contended: resting ? '1' : '0'}},
        h('td', {}, paramsText(p.point)),
        h('td', {class: `kind ${p.kind}`, title: p.verdict},
          kindText(p), resting ? h('div', {class: 'small contended-note'}, 'rests on contended cases') : null),
        h('td', {}, p.winner ? [strategySwatch(p.winner), ' ', p.winner] : '–'),
        h('td', {}, p.runner_up ? [strategySwatch(p.runner_up), ' ', p.runner_up] : '–'),
        h('td', {class: 'num'}, mapRatioText(p)),
        h('td', {class: 'num'}, `${(p.margin * 100).toFixed(1)} %`),
        h('td', {}, pointConditions(p)));
    })));
}

// What every answer of a device rests on: contended cases (with the largest share of
// the CPU other processes took) and quick mode.
function deviceConditions(device, runQuick) {
  const entries = device.answers.flatMap((a) => a.points.flatMap((p) => p.ranked));
  const contended = entries.filter((e) => e.contended);
  const quick = runQuick || entries.some((e) => e.quick);
  const share = Math.max(0, ...entries.map((e) => e.other_cpu_share || 0));
  return h('p', {class: 'small conditions'}, 'Conditions: ',
    contended.length ? `${contended.length} contended case${contended.length === 1 ? '' : 's'}` : 'no contended case',
    share > 0 ? `; other processes used up to ${Math.round(share * 100)} % of the CPU` : '',
    `; ${quick ? 'quick mode (the plan\'s quick settings)' : 'full mode'}.`);
}

function renderAnswer(area, data) {
  clear(area);
  area.appendChild(h('p', {class: 'muted small'}, `From run ${shortId(data.run_id)} (${data.plan_name}). `, data.near));
  for (const device of data.devices) {
    const left = (data.emulated_left_out || {})[device.device];
    area.appendChild(h('section', {class: 'recommend-device', dataset: {device: device.device}},
      h('h2', {}, device.device,
        left ? h('span', {class: 'emulated'}, ` emulated: ${left} results left out`) : null),
      device.answers.map((a) => h('div', {class: 'recommend-answer', dataset: {verdict: a.verdict, group: a.group}},
        a.group ? h('h3', {}, a.group, h('span', {class: 'muted small'}, `  swept: ${a.swept.join(', ')}`)) : null,
        h('p', {class: 'sentence'}, a.answer),
        a.points.length ? pointsTable(a) : null)),
      deviceConditions(device, data.run_quick)));
  }
  area.dataset.state = 'answer';
}

function renderError(area, error) {
  clear(area);
  area.appendChild(h('p', {class: 'form-error', id: 'recommend-error', role: 'alert'}, String(error.message || error)));
  area.dataset.state = 'error';
}

export async function renderRecommend(root, params) {
  document.title = 'Recommend · fleetmark';
  const {runs} = await getJson('runs', {limit: 200});
  const done = runs.filter((r) => r.status === 'done' && r.results > 0);
  const plans = [...new Set(done.map((r) => r.plan_name))];
  const initial = splitProfile(params.get('profile') || '');
  const cpu = h('input', {type: 'text', id: 'profile-cpu', size: 8, value: initial.cpu, placeholder: '50'});
  const wait = h('input', {type: 'text', id: 'profile-wait', size: 8, value: initial.wait, placeholder: '2000'});
  const other = h('input', {type: 'text', id: 'profile-other', size: 24, value: initial.other,
    placeholder: 'e.g. alloc_kib=4'});
  const chosen = params.get('run') ? `run:${params.get('run')}` :
    params.get('plan_latest') ? `plan:${params.get('plan_latest')}` : '';
  const source = h('select', {id: 'recommend-source'},
    h('option', {value: ''}, 'newest done run with batch results'),
    plans.map((p) => h('option', {value: `plan:${p}`, selected: chosen === `plan:${p}`}, `latest run of plan ${p}`)),
    done.map((r) => h('option', {value: `run:${r.run_id}`, selected: chosen.startsWith('run:') &&
      r.run_id.startsWith(chosen.slice(4))}, `run ${shortId(r.run_id)} ${r.plan_name}`)));
  const area = h('div', {id: 'recommend-result'});
  const ask = async (query) => {
    area.dataset.state = 'loading';
    try {
      renderAnswer(area, await getJson('recommend', query));
    } catch (error) {
      if (!(error instanceof ApiError) || error.status === 401) throw error;
      renderError(area, error);
    }
  };
  const form = h('form', {class: 'controls', id: 'recommend-form', onsubmit: async (e) => {
    e.preventDefault();
    const [kind, value] = [source.value.slice(0, source.value.indexOf(':')), source.value.slice(source.value.indexOf(':') + 1)];
    const query = {profile: joinProfile(cpu.value, wait.value, other.value),
      run: kind === 'run' ? value : undefined, plan_latest: kind === 'plan' ? value : undefined};
    // The URL keeps the question (a link to it), without re-rendering the form.
    const url = new URL(window.location.href);
    for (const [k, v] of Object.entries(query)) {
      if (v) url.searchParams.set(k, v);
      else url.searchParams.delete(k);
    }
    history.replaceState(null, '', url.pathname + url.search);
    await ask(query);
  }},
  h('label', {}, 'cpu_us ', cpu), h('label', {}, 'wait_us ', wait), h('label', {}, 'other ', other),
  h('label', {}, 'answer from ', source), h('button', {type: 'submit', id: 'recommend-submit'}, 'Recommend'));
  root.appendChild(h('h1', {}, 'Recommend a strategy'));
  root.appendChild(h('p', {class: 'muted small'}, 'Describe a task (CPU time and blocking wait per task, in µs; ' +
    'other keys as `fleetmark recommend --profile` takes them) and get, per device, the strategy measured fastest ' +
    'around it — the same answer as `fleetmark recommend --profile P --run RUN --format json`.'));
  root.appendChild(form);
  root.appendChild(area);
  if (params.get('profile') !== null) {
    await ask({profile: params.get('profile'), run: params.get('run') || undefined,
      plan_latest: params.get('plan_latest') || undefined});
  }
}
