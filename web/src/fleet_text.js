// The Fleet page's rows counted as text: which rows are agents, imported device records
// or removed, and the summary line. Pure, no DOM (the Fleet page and
// tests/web/page_text_test.mjs use it).

// An imported device record: the device `fleetmark results import` created for a machine
// without an agent (no agent runs there: never online, never given a job).
// /api/v1/agents gives it the state "imported" (a removed one: "removed", as any row).
export function isImportedDevice(a) {
  return a.state === 'imported';
}

const plural = (n, noun) => `${n} ${noun}${n === 1 ? '' : 's'}`;

// The summary line of `rows` (/api/v1/agents' agents), each row counted once: the
// agents (neither removed nor imported) with how many are online and quarantined, then
// the imported device records, then the removed rows, e.g. "3 agents, 1 online · 2
// imported devices; 1 removed (their results are kept)."
export function fleetSummaryText(rows) {
  const removed = rows.filter((a) => a.state === 'removed').length;
  const imported = rows.filter(isImportedDevice).length;
  const agents = rows.filter((a) => a.state !== 'removed' && !isImportedDevice(a));
  const online = agents.filter((a) => a.state === 'online').length;
  const quarantined = agents.filter((a) => a.health === 'quarantined').length;
  return `${plural(agents.length, 'agent')}, ${online} online` +
    (quarantined ? `, ${quarantined} quarantined (skipped by selectors without health=any)` : '') +
    (imported ? ` · ${plural(imported, 'imported device')}` : '') +
    (removed ? `; ${removed} removed (their results are kept).` : '.');
}
