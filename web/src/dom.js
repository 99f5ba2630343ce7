// DOM helpers. Every piece of text goes through textContent (never innerHTML), so
// strings that came from agents (device names, labels, CPU models) always show as
// text. escapeHtml() is for the few places a library wants an HTML string (ECharts
// tooltip formatters).

// h('td', {class: 'num', title: x}, 'text', childNode, ['nested', 'children'])
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === 'dataset') {
      for (const [k, v] of Object.entries(value)) el.dataset[k] = String(v);
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) {
      append(el, child);
    } else if (child instanceof Node) {
      el.appendChild(child);
    } else {
      el.appendChild(document.createTextNode(String(child)));
    }
  }
}

const kHtmlEscapes = {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'};

export function escapeHtml(value) {
  return String(value).replace(/[&<>"']/g, (c) => kHtmlEscapes[c]);
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// A <select> whose options are [value, label] pairs.
export function select(attrs, options, selected) {
  return h('select', attrs, options.map(([value, label]) =>
    h('option', {value, selected: value === selected}, label)));
}
