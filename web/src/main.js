// fleetmark web view entry point: picks the page for the current path and renders it
// into <main>.
import './style.css';
import {ApiError, setToken} from './api.js';
import {disposeCharts} from './charts/setup.js';
import {clear, h} from './dom.js';
import {renderCompare} from './pages/compare.js';
import {renderFleet} from './pages/fleet.js';
import {renderHistory} from './pages/history.js';
import {renderMap} from './pages/map.js';
import {renderRecommend} from './pages/recommend.js';
import {renderRun} from './pages/run.js';
import {renderRuns} from './pages/runs.js';
import {link, queryParams, setNavigateHandler} from './router.js';

const routes = [
  {pattern: /^\/(fleet)?$/, nav: 'fleet', render: (root, params) => renderFleet(root, params)},
  {pattern: /^\/runs$/, nav: 'runs', render: (root, params) => renderRuns(root, params)},
  {pattern: /^\/runs\/([^/]+)$/, nav: 'runs', render: (root, params, m) => renderRun(root, params, decodeURIComponent(m[1]))},
  {pattern: /^\/compare$/, nav: 'compare', render: (root, params) => renderCompare(root, params)},
  {pattern: /^\/map$/, nav: 'map', render: (root, params) => renderMap(root, params)},
  {pattern: /^\/recommend$/, nav: 'recommend', render: (root, params) => renderRecommend(root, params)},
  {pattern: /^\/history$/, nav: 'history', render: (root, params) => renderHistory(root, params)},
];

function renderNotFound(root, what) {
  document.title = 'Not found · fleetmark';
  root.appendChild(h('section', {class: 'notfound', 'data-notfound': '1'},
    h('h1', {}, '404 — not found'),
    h('p', {}, what),
    h('p', {}, link('/', 'Back to the fleet'))));
}

function renderTokenForm(root) {
  const input = h('input', {type: 'password', placeholder: 'API token', size: 40});
  root.appendChild(h('section', {class: 'panel'},
    h('h1', {}, 'Token required'),
    h('p', {}, 'This coordinator asks for a bearer token.'),
    h('form', {onsubmit: (e) => {
      e.preventDefault();
      setToken(input.value.trim());
      render();
    }}, input, ' ', h('button', {type: 'submit'}, 'Use token'))));
}

function renderNav(active) {
  const nav = document.getElementById('nav');
  clear(nav);
  nav.appendChild(h('span', {class: 'brand'}, 'fleetmark'));
  for (const [key, href, label] of [['fleet', '/fleet', 'Fleet'], ['runs', '/runs', 'Runs'],
    ['compare', '/compare', 'Compare'], ['map', '/map', 'Map'], ['recommend', '/recommend', 'Recommend'],
    ['history', '/history', 'History']]) {
    const a = link(href, label);
    if (key === active) a.classList.add('active');
    nav.appendChild(a);
  }
}

let renderSerial = 0;

async function render() {
  const serial = ++renderSerial;
  disposeCharts();
  const root = clear(document.getElementById('main'));
  const path = window.location.pathname.replace(/\/+$/, '') || '/';
  const route = routes.map((r) => ({r, m: path.match(r.pattern)})).find((x) => x.m);
  renderNav(route ? route.r.nav : '');
  document.body.dataset.ready = '0';
  try {
    if (!route) {
      renderNotFound(root, `No page at ${path}.`);
    } else {
      await route.r.render(root, queryParams(), route.m);
    }
  } catch (error) {
    if (serial !== renderSerial) return;
    clear(root);
    disposeCharts();
    if (error instanceof ApiError && error.status === 404) {
      renderNotFound(root, error.message);
    } else if (error instanceof ApiError && error.status === 401) {
      renderTokenForm(root);
    } else {
      root.appendChild(h('section', {class: 'error'}, h('h1', {}, 'Something went wrong'),
        h('p', {}, String(error.message || error))));
    }
  }
  if (serial === renderSerial) document.body.dataset.ready = '1';
}

setNavigateHandler(render);
window.addEventListener('popstate', render);
render();
