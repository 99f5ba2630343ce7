// DOM helpers. Every piece of text goes through textContent (never innerHTML), so
// strings that came from agents (device names, labels, CPU models) always show as
// text, and through displayText(), so they show as the CLI prints them. escapeHtml()
// is for the few places a library wants an HTML string (ECharts tooltip formatters).

// The CLI's escaping rule (engine/common/text.h, EscapeForTerminal): a control
// character (C0 including newline and tab, DEL) becomes \xNN, a C1 control its two UTF-8
// bytes \xc2\xNN, a format character (Unicode category Cf: zero-width spaces and
// joiners, bidirectional overrides and isolates, the BOM, soft hyphen, tags) \uXXXX in
// lower-case hex (at least four digits); every other character is kept. Text that is
// not UTF-8 reaches the page as U+FFFD (the server's JSON replaces it).
export function displayText(value) {
  return String(value).replace(/[\x00-\x1f\x7f-\x9f]|\p{Cf}/gu, (c) => {
    const cp = c.codePointAt(0);
    const hex = (n) => n.toString(16).padStart(2, '0');
    if (cp < 0x20 || cp === 0x7f) return `\\x${hex(cp)}`;
    if (cp <= 0x9f) return `\\xc2\\x${hex(cp)}`;
    return `\\u${cp.toString(16).padStart(4, '0')}`;
  });
}

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
      // A tooltip is shown text (its lines are the page's own); other attributes
      // (href, value, data) are data.
      el.setAttribute(key, value === true ? '' :
        key === 'title' ? String(value).split('\n').map(displayText).join('\n') : String(value));
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
      el.appendChild(document.createTextNode(displayText(child)));
    }
  }
}

const kHtmlEscapes = {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'};

export function escapeHtml(value) {
  return displayText(value).replace(/[&<>"']/g, (c) => kHtmlEscapes[c]);
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
