// Runs page: each run's status, plan, submitter and per-agent progress, and the
// schedules that fire runs (cron, plan, selector, case filter, paused or active).
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

// A schedule's last fire: when, and the run it made (a link to it) or why it made none.
function lastFire(s) {
  if (!s.last_fire_unix_ms) return 'never';
  if (!s.last_fire_run_id) return `${formatTime(s.last_fire_unix_ms)}: ${s.last_fire_outcome}`;
  return [`${formatTime(s.last_fire_unix_ms)}: run `,
    link(`/runs/${encodeURIComponent(s.last_fire_run_id)}`, shortId(s.last_fire_run_id))];
}

// The schedules as `fleetmark schedules list` shows them: state (paused: fires nothing
// until `schedules resume`), the case filter applied to every run it fires, next and
// latest fire.
function schedulesTable(schedules) {
  return h('section', {class: 'schedules'}, h('h2', {}, 'Schedules'),
    schedules.length === 0 ? h('p', {class: 'muted'}, 'No schedule: create one with `fleetmark schedules create`.') :
      h('table', {class: 'grid', id: 'schedules-table'},
        h('thead', {}, h('tr', {}, ['schedule', 'state', 'cron (UTC)', 'plan', 'selector', 'filter', 'next fire',
          'last fire'].map((t) => h('th', {}, t)))),
        h('tbody', {}, schedules.map((s) => h('tr', {dataset: {schedule: s.name}},
          h('td', {}, s.name),
          h('td', {}, h('span', {class: `status ${s.paused ? 'paused' : 'active'}`}, s.paused ? 'paused' : 'active')),
          h('td', {}, h('code', {}, s.cron)),
          h('td', {}, s.plan_name, s.quick ? h('span', {class: 'label'}, 'quick') : null),
          h('td', {class: 'small'}, s.selector_text),
          h('td', {class: 'small'}, s.filter ? h('code', {}, s.filter) : 'every case'),
          h('td', {}, s.paused ? '– (paused)' : formatTime(s.next_fire_unix_ms)),
          h('td', {class: 'small last-fire'}, lastFire(s)))))));
}

export async function renderRuns(root, params) {
  document.title = 'Runs · fleetmark';
  const limit = Math.min(1000, Math.max(1, Number(params.get('limit')) || 50));
  const [{runs}, {schedules}] = await Promise.all([getJson('runs', {limit}), getJson('schedules')]);
  const scheduleOf = new Map(schedules.map((s) => [`schedule:${s.name}`, s]));
  root.appendChild(h('h1', {}, 'Runs'));
  root.appendChild(h('p', {class: 'muted'}, `The newest ${runs.length} runs. `,
    runs.length >= limit ? link(`/runs?limit=${Math.min(1000, limit * 4)}`, 'show more') : null));
  if (runs.length === 0) {
    root.appendChild(h('p', {}, 'No run yet: submit a plan with `fleetmark submit`.'));
    root.appendChild(schedulesTable(schedules));
    return;
  }
  const rows = runs.map((r) => {
    const source = (r.submitted_by || '').startsWith('schedule:') ? 'schedule' : 'cli';
    return h('tr', {dataset: {run: r.run_id}},
      h('td', {}, link(`/runs/${encodeURIComponent(r.run_id)}`, shortId(r.run_id))),
      h('td', {}, r.plan_name, r.quick ? h('span', {class: 'label'}, 'quick') : null),
      h('td', {}, h('span', {class: `status ${r.status}`}, r.status),
        r.imported ? h('span', {class: 'label'}, 'imported') : null),
      h('td', {}, h('span', {class: `source ${source}`}, source), ' ', r.submitted_by,
        scheduleOf.has(r.submitted_by) && scheduleOf.get(r.submitted_by).paused ?
          h('span', {class: 'label paused', title: 'this schedule is paused now'}, 'paused') : null),
      h('td', {class: 'small'}, r.selector_text),
      h('td', {}, formatTime(r.created_unix_ms)),
      h('td', {class: 'num'}, String(r.results)),
      h('td', {}, r.jobs.map(progress)));
  });
  root.appendChild(h('table', {class: 'grid', id: 'runs-table'},
    h('thead', {}, h('tr', {}, ['run', 'plan', 'status', 'submitted by', 'selector', 'created',
      'results', 'agents'].map((t) => h('th', {}, t)))),
    h('tbody', {}, rows)));
  root.appendChild(schedulesTable(schedules));
}
