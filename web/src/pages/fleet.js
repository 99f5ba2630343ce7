// Fleet page: every agent with its state, health (noise score, quarantine), host (agents
// sharing it), hardware and labels; imported device records (`fleetmark results import`)
// are rows too, counted apart from the agents (fleet_text.js).
import {getJson} from '../api.js';
import {h} from '../dom.js';
import {fleetSummaryText, isImportedDevice} from '../fleet_text.js';
import {formatAgo, formatBytes, formatTime} from '../format.js';
import {coreClassesText} from '../host_text.js';
import {link} from '../router.js';

// The noise score cell: "1.3 %" over N nights, "–" while unknown.
function noiseCell(a) {
  const nights = `${a.noise_nights || 0} night${a.noise_nights === 1 ? '' : 's'}`;
  if (a.noise_percent === null || a.noise_percent === undefined) {
    return h('td', {class: 'num noise', title: `no noise score yet (${nights} of calibration)`}, '–');
  }
  return h('td', {class: 'num noise', title: `robust spread of the calibration cases over ${nights}`},
    `${a.noise_percent.toFixed(1)} %`, h('div', {class: 'muted'}, nights));
}

// Host: the machine id's first 8 hex digits, the other agents on the same host (same
// machine id and boot id: by default one job at a time among them) and whether this one
// may run a job beside them (--exclusive_cpus); "–" when the agent sent no identity.
function hostCell(a) {
  if (!a.host_id) return h('td', {class: 'host', title: 'no machine id / boot id in its hello'}, '–');
  const shared = a.same_host_as || [];
  return h('td', {class: 'host', title: 'first 8 hex digits of /etc/machine-id'}, h('code', {}, a.host_id),
    shared.length ? h('div', {class: 'small same-host'}, `shared with ${shared.join(', ')}`) : null,
    a.exclusive_cpus ? h('div', {class: 'muted small'}, 'exclusive cpus') : null);
}

// Health: "ok", or "quarantined" with since when and why (`fleetmark agents release`).
function healthCell(a) {
  if (isImportedDevice(a)) return h('td', {class: 'health', title: 'an imported device record runs no calibration'}, '–');
  if (a.health !== 'quarantined') return h('td', {class: 'health'}, h('span', {class: 'health ok'}, 'ok'));
  return h('td', {class: 'health'}, h('span', {class: 'health quarantined'}, 'quarantined'),
    h('div', {class: 'muted small quarantine-since'}, `since ${formatTime(a.quarantined_unix_ms)}`),
    h('div', {class: 'small quarantine-reason'}, a.quarantine_reason),
    h('div', {class: 'muted small'}, `release: fleetmark agents release ${a.name}`));
}

// State: online, offline, removed, or imported (an imported device record: not offline, never online).
function stateCell(a) {
  if (isImportedDevice(a)) {
    return h('td', {}, h('span', {class: 'state imported label', title: 'a device record of fleetmark results import: ' +
      'results files of a machine without an agent; never online, never given a job'}, 'imported'));
  }
  return h('td', {}, h('span', {class: `state ${['online', 'removed'].includes(a.state) ? a.state : 'offline'}`}, a.state));
}

export async function renderFleet(root) {
  document.title = 'Fleet · fleetmark';
  const {agents} = await getJson('agents');
  root.appendChild(h('h1', {}, 'Fleet'));
  root.appendChild(h('p', {class: 'muted', id: 'fleet-summary'}, fleetSummaryText(agents)));
  if (agents.length === 0) {
    root.appendChild(h('p', {}, 'No agent has enrolled yet.'));
    return;
  }
  const compareAll = `/compare?agents=${agents.map((a) => encodeURIComponent(a.agent_id)).join(',')}`;
  root.appendChild(h('p', {}, link(compareAll, 'Compare all devices →')));
  const rows = agents.map((a) => {
    const host = a.host || {};
    return h('tr', {dataset: {agent: a.agent_id, health: a.health || 'ok'}},
      stateCell(a),
      healthCell(a),
      noiseCell(a),
      h('td', {class: 'name'}, a.name, host.device_model ? h('div', {class: 'muted'}, host.device_model) : null),
      hostCell(a),
      h('td', {}, host.arch || '–', host.emulated ? h('div', {class: 'emulated', title: host.emulation_evidence || ''},
        'emulated: not hardware numbers') : null),
      h('td', {}, host.cpu_model || '–', host.soc ? h('div', {class: 'muted'}, host.soc) : null),
      h('td', {class: 'num'}, `${host.physical_cores ?? '–'} / ${host.logical_cpus ?? '–'}`),
      h('td', {}, host.smt ? 'yes' : 'no'),
      h('td', {class: 'small core-classes'}, coreClassesText(host)),
      h('td', {class: 'num'}, formatBytes(host.memory_bytes)),
      isImportedDevice(a) ? h('td', {title: 'an imported device record is never online'}, '–') :
        h('td', {title: formatTime(a.last_seen_unix_ms)}, formatAgo(a.last_seen_unix_ms)),
      h('td', {}, Object.entries(a.labels || {}).map(([k, v]) => h('span', {class: 'label'}, `${k}=${v}`))),
      h('td', {}, link(`/compare?agents=${encodeURIComponent(a.agent_id)}`, 'results'), ' · ',
        link(`/history?agents=${encodeURIComponent(a.agent_id)}`, 'history')));
  });
  root.appendChild(h('table', {class: 'grid', id: 'fleet-table'},
    h('thead', {}, h('tr', {}, ['state', 'health', 'noise', 'name', 'host', 'arch', 'CPU', 'cores / threads', 'SMT', 'core kinds',
      'memory', 'last seen', 'labels', ''].map((t) => h('th', {}, t)))),
    h('tbody', {}, rows)));
}
