// Grouping of case results: a "group" is one scenario/workload/io_mode/placement
// combination, inside which strategies are compared.

// Memory curves of blocking and suspending strategies belong on one chart (threads vs
// coroutines is the point of that scenario), so its io mode is not part of the key.
export function groupKey(r) {
  const io = r.scenario === 'memory' ? '*' : (r.io_mode || '-');
  return `${r.scenario}/${r.workload || '-'}/${io}/${r.placement || 'any'}`;
}

export function groupLabel(r) {
  const parts = [r.scenario];
  if (r.workload) parts.push(r.workload);
  let label = parts.join(' · ');
  if (r.io_mode && r.io_mode !== 'blocking' && r.scenario !== 'memory') label += ` (${r.io_mode})`;
  if (r.placement && r.placement !== 'any') label += ` [${r.placement}]`;
  return label;
}

// Map preserving first-seen order: key -> array of items.
export function groupBy(items, keyOf) {
  const groups = new Map();
  for (const item of items) {
    const key = keyOf(item);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(item);
  }
  return groups;
}

export function hasTiming(r) {
  return r.status === 'ok' && r.stats && r.stats.count > 0 && Number.isFinite(r.stats.median_ns);
}
