// Client-side routing over real paths (/fleet, /runs, /runs/<id>, /compare, /map,
// /recommend, /history): every page's state lives in its URL, so any view can be shared
// as a link.
import {h} from './dom.js';

let onNavigate = () => {};

export function setNavigateHandler(handler) {
  onNavigate = handler;
}

export function navigate(url, {replace = false} = {}) {
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  onNavigate();
}

// Replaces some query parameters of the current URL (null/'' removes one) and
// re-renders the page.
export function updateQuery(changes, options) {
  const url = new URL(window.location.href);
  for (const [key, value] of Object.entries(changes)) {
    if (value === null || value === undefined || value === '' || value === false) url.searchParams.delete(key);
    else url.searchParams.set(key, value === true ? '1' : value);
  }
  navigate(url.pathname + url.search, options);
}

// <a> that navigates without reloading the page.
export function link(href, ...children) {
  return h('a', {
    href,
    onclick: (event) => {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
      event.preventDefault();
      navigate(href);
    },
  }, ...children);
}

export function queryParams() {
  return new URLSearchParams(window.location.search);
}

export function listParam(params, name) {
  return (params.get(name) || '').split(',').filter((s) => s.length > 0);
}

// The agents of an `agents=` list as ids, by the API's one rule (coordinator/http/api.cc,
// Api::ResolveAgents): an agent id, else the name of an agent that is not removed.
// An entry naming no agent stays as given, so the API's 404 names it.
export function agentIdsOf(entries, agents) {
  return entries.map((entry) => {
    const byId = agents.find((a) => a.agent_id === entry);
    const byName = agents.find((a) => a.name === entry && a.state !== 'removed');
    return (byId || byName || {agent_id: entry}).agent_id;
  });
}

// Whether `runId` is the run an entry of `runs=` names: the id or a prefix of it
// (the API resolves a unique prefix, as /runs/<prefix> and the CLI do).
export function runMatches(runId, entry) {
  return Boolean(entry) && runId.startsWith(entry.toLowerCase());
}
