// How a case measured while other work used the device is shown (CaseResult.contended
// and other_cpu_share: engine/measure/contention.h marks a case contended when other
// processes took more than its threshold of the device's CPU; the one verdict rule then
// rules that strategy out only beyond what the other work can explain and never calls its
// point equivalent, engine/measure/verdict.h): a ⚠ marker with
// a tooltip, on the Run, Compare, Map and Recommend pages alike.
import {h} from './dom.js';

// "other processes used 40 % of the CPU" (share 0..1), or "" when unknown.
function shareText(share) {
  return Number.isFinite(share) && share > 0 ? `other processes used ${Math.round(share * 100)} % of the CPU` : '';
}

// The tooltip of a contended case: what happened and what it means for the verdict.
export function contendedTitle(entry) {
  const share = shareText(entry.other_cpu_share);
  return `contended: measured while other work used the device${share ? ` (${share})` : ''}; ` +
    'a verdict resting on it stays undecided unless the gap is beyond what that work can explain';
}

// The marker (null for a case that was not contended).
export function contendedMark(entry) {
  if (!entry || !entry.contended) return null;
  return h('span', {class: 'contended', title: contendedTitle(entry), dataset: {contended: '1'}}, '⚠');
}
