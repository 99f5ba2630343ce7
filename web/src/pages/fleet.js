// Fleet page: every agent with its state, hardware and labels.
import {getJson} from '../api.js';
import {h} from '../dom.js';
import {formatAgo, formatBytes, formatTime} from '../format.js';
import {link} from '../router.js';

function coreKinds(host) {
  const kinds = (host.core_classes && host.core_classes.length ? host.core_classes : host.core_kinds) || [];
  if (kinds.length === 0) return '–';
  return kinds.map((k) => {
    const freq = k.max_frequency_khz ? ` @ ${(k.max_frequency_khz / 1e6).toFixed(2)} GHz` : '';
    const arch = k.microarchitecture ? ` ${k.microarchitecture}` : '';
    return `${k.name}: ${k.cores} × ${k.threads_per_core || 1}T${arch}${freq}`;
  }).join(' · ');
}

export async function renderFleet(root) {
  document.title = 'Fleet · fleetmark';
  const {agents} = await getJson('agents');
  const online = agents.filter((a) => a.state === 'online').length;
  const removed = agents.filter((a) => a.state === 'removed').length;
  root.appendChild(h('h1', {}, 'Fleet'));
  root.appendChild(h('p', {class: 'muted'}, `${agents.length - removed} agents, ${online} online` +
    (removed ? `; ${removed} removed (their results are kept).` : '.')));
  if (agents.length === 0) {
    root.appendChild(h('p', {}, 'No agent has enrolled yet.'));
    return;
  }
  const compareAll = `/compare?agents=${agents.map((a) => encodeURIComponent(a.agent_id)).join(',')}`;
  root.appendChild(h('p', {}, link(compareAll, 'Compare all devices →')));
  const rows = agents.map((a) => {
    const host = a.host || {};
    return h('tr', {dataset: {agent: a.agent_id}},
      h('td', {}, h('span', {class: `state ${['online', 'removed'].includes(a.state) ? a.state : 'offline'}`}, a.state)),
      h('td', {class: 'name'}, a.name, host.device_model ? h('div', {class: 'muted'}, host.device_model) : null),
      h('td', {}, host.arch || '–', host.emulated ? h('div', {class: 'emulated', title: host.emulation_evidence || ''},
        'emulated: not hardware numbers') : null),
      h('td', {}, host.cpu_model || '–', host.soc ? h('div', {class: 'muted'}, host.soc) : null),
      h('td', {class: 'num'}, `${host.physical_cores ?? '–'} / ${host.logical_cpus ?? '–'}`),
      h('td', {}, host.smt ? 'yes' : 'no'),
      h('td', {class: 'small'}, coreKinds(host)),
      h('td', {class: 'num'}, formatBytes(host.memory_bytes)),
      h('td', {title: formatTime(a.last_seen_unix_ms)}, formatAgo(a.last_seen_unix_ms)),
      h('td', {}, Object.entries(a.labels || {}).map(([k, v]) => h('span', {class: 'label'}, `${k}=${v}`))),
      h('td', {}, link(`/compare?agents=${encodeURIComponent(a.agent_id)}`, 'results'), ' · ',
        link(`/history?agents=${encodeURIComponent(a.agent_id)}`, 'history')));
  });
  root.appendChild(h('table', {class: 'grid', id: 'fleet-table'},
    h('thead', {}, h('tr', {}, ['state', 'name', 'arch', 'CPU', 'cores / threads', 'SMT', 'core kinds',
      'memory', 'last seen', 'labels', ''].map((t) => h('th', {}, t)))),
    h('tbody', {}, rows)));
}
