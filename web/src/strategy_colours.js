// One colour per strategy on every page (Run, Compare, Map, Recommend): a strategy's
// colour depends on its name only, never on which strategies a chart happens to show.
// The registry's strategies (engine/strategies/registry.h, kStrategies, in that order)
// and the shipped plans' crossover labels have fixed colours; any other name (a plan's
// own label) gets one from a hash of the name (FNV-1a), the same on every page and load.
import {h} from './dom.js';

const kKnown = [
  // engine/strategies/registry.h, kStrategies order.
  ['direct', '#4e79a7'], ['single_thread', '#f28e2b'], ['fixed_pool', '#e15759'], ['work_stealing', '#76b7b2'],
  ['limited', '#59a14f'], ['elastic_pool', '#edc948'], ['thread_per_task', '#b07aa1'], ['async', '#ff9da7'],
  ['coroutine', '#9c755f'], ['fiber', '#79706e'], ['event_loop', '#17becf'], ['openmp_for', '#1f3b73'],
  ['openmp_for_dynamic', '#5f8fd0'], ['openmp_for_guided', '#a3c4ee'], ['openmp_task', '#7a4e1f'],
  ['std_par', '#3d8c40'],
  // Labels of plans/crossover.txtpb and the recommend plans.
  ['fixed_pool_cpu', '#d37295'], ['fixed_pool_io', '#2a5d8f'], ['elastic_pool_io', '#8cd17d'],
  ['work_stealing_cpu', '#b6992d'],
];
const kColourOf = new Map(kKnown);

// FNV-1a (32 bit) of the name's UTF-16 code units.
function hash(name) {
  let x = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    x ^= name.charCodeAt(i);
    x = Math.imul(x, 0x01000193) >>> 0;
  }
  return x;
}

// HSL (h in degrees, s and l in [0, 1]) as "#rrggbb".
function hslHex(hue, s, l) {
  const k = (n) => (n + hue / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n) => Math.round(255 * (l - a * Math.max(-1, Math.min(k(n) - 3, 9 - k(n), 1))));
  return `#${[f(0), f(8), f(4)].map((v) => v.toString(16).padStart(2, '0')).join('')}`;
}

// "#rrggbb" of strategy `name` (a label as the pages show it).
export function strategyColour(name) {
  const known = kColourOf.get(String(name));
  if (known) return known;
  const x = hash(String(name));
  return hslHex(x % 360, 0.45 + ((x >>> 9) % 20) / 100, 0.38 + ((x >>> 17) % 16) / 100);
}

// True if `name` has one of the fixed colours (a registry strategy or a shipped label).
export function hasFixedColour(name) {
  return kColourOf.has(String(name));
}

// A small square of the strategy's colour, for tables and legends.
export function strategySwatch(name) {
  return h('span', {class: 'swatch', style: `background:${strategyColour(name)}`, dataset: {strategy: name}});
}
