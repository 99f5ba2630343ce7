// Number and time formatting for tables and chart axes.

// 1234567 ns -> "1.23 ms"; picks ns, µs, ms or s. Zero is "0" (an axis origin).
export function formatNs(ns) {
  if (ns === null || ns === undefined || !Number.isFinite(ns)) return '–';
  if (ns === 0) return '0';
  const abs = Math.abs(ns);
  if (abs >= 1e9) return `${(ns / 1e9).toPrecision(3)} s`;
  if (abs >= 1e6) return `${(ns / 1e6).toPrecision(3)} ms`;
  if (abs >= 1e3) return `${(ns / 1e3).toPrecision(3)} µs`;
  return `${ns.toPrecision(3)} ns`;
}

export function formatBytes(bytes) {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

// `digits` significant digits; integers, and values whose integer part already has
// that many digits, in full with thousands separators (5333.3 -> "5,333", not "5333").
export function formatNumber(value, digits = 3) {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  if (Math.abs(value) >= 10 ** (digits - 1)) return Math.round(value).toLocaleString('en-US');
  return value.toPrecision(digits);
}

// A cell the server formatted with the CLI table's rule (threads_text "48 of 100",
// cpu_per_rep_text "2.40 µs": engine/report/table.h), so both views show the same
// value; its "-" (nothing measured) is drawn as the page's "–".
export function cliText(text) {
  return text === undefined || text === null || text === '' || text === '-' ? '–' : String(text);
}

export function formatRatio(value) {
  if (!Number.isFinite(value)) return '–';
  return `${value.toFixed(value >= 100 ? 0 : 2)}×`;
}

// ms since epoch (or 0) -> "2024-05-01 03:00 UTC".
export function formatTime(unixMs) {
  if (!unixMs) return '–';
  const d = new Date(unixMs);
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function formatAgo(unixMs, nowMs = Date.now()) {
  if (!unixMs) return 'never';
  const s = Math.max(0, Math.round((nowMs - unixMs) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

export function shortId(id) {
  return String(id || '').slice(0, 8);
}

// "N results" as the API's run and the CLI count them (cases with a real result: the
// placeholders a cancelled job reports for the cases it did not measure do not count),
// and the placeholders as the CLI's "M cancelled".
export function resultsText(run, results) {
  const cancelled = results.filter((r) => r.status === 'cancelled').length;
  return `${run.results} results` + (cancelled > 0 ? `, ${cancelled} cancelled` : '');
}
