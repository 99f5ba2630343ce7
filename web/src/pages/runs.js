// Runs page: each run's status, plan, submitter and per-agent progress.
import {getJson} from '../api.js';
import {h} from '../dom.js';
import {formatTime, shortId} from '../format.js';
import {link} from '../router.js';

function progress(job) {
  const total = job.cases_total || 0;
  const done = Math.min(job.cases_done || 0, total);
  const percent = total ? Math.round((100 * done) / total) : (job.status === 'done' ? 100 : 0);
  return h('div', {class: 'job'},
    h('span', {class: 'job-agent', title: job.agent_name}, job.agent_name),
    h('span', {class: `status ${job.status}`}, job.status),
    h('progress', {max: 100, value: percent}),
    h('span', {class: 'muted small'}, `${done}/${total}`),
    job.message ? h('span', {class: 'muted small'}, ` ${job.message}`) : null);
}

export async function renderRuns(root, params) {
  document.title = 'Runs · fleetmark';
  const limit = Math.min(1000, Math.max(1, Number(params.get('limit')) || 50));
  const {runs} = await getJson('runs', {limit});
  root.appendChild(h('h1', {}, 'Runs'));
  root.appendChild(h('p', {class: 'muted'}, `The newest ${runs.length} runs. `,
    runs.length >= limit ? link(`/runs?limit=${Math.min(1000, limit * 4)}`, 'show more') : null));
  if (runs.length === 0) {
    root.appendChild(h('p', {}, 'No run yet: submit a plan with `fleetmark submit`.'));
    return;
  }
  const rows = runs.map((r) => {
    const source = (r.submitted_by || '').startsWith('schedule:') ? 'schedule' : 'cli';
    return h('tr', {dataset: {run: r.run_id}},
      h('td', {}, link(`/runs/${encodeURIComponent(r.run_id)}`, shortId(r.run_id))),
      h('td', {}, r.plan_name, r.quick ? h('span', {class: 'label'}, 'quick') : null),
      h('td', {}, h('span', {class: `status ${r.status}`}, r.status)),
      h('td', {}, h('span', {class: `source ${source}`}, source), ' ', r.submitted_by),
      h('td', {class: 'small'}, r.selector || 'all online'),
      h('td', {}, formatTime(r.created_unix_ms)),
      h('td', {class: 'num'}, String(r.results)),
      h('td', {}, r.jobs.map(progress)));
  });
  root.appendChild(h('table', {class: 'grid', id: 'runs-table'},
    h('thead', {}, h('tr', {}, ['run', 'plan', 'status', 'submitted by', 'selector', 'created',
      'results', 'agents'].map((t) => h('th', {}, t)))),
    h('tbody', {}, rows)));
}
