// The strategy map of one device and group (from /api/v1/map, computed by the
// coordinator's engine/report/strategy_map): a heatmap over one or two swept
// parameters, each cell coloured by its leader, points without a decided winner hatched
// and labelled by their kind (equivalent, undecided, provisional); hover gives the
// verdict, leader, runner-up and the paired ratio with its interval. And the chart of one crossover
// across devices: each device's interval [last point the first strategy won, first
// point the second did], the estimate marked. Each leader in its strategy's colour
// (strategy_colours.js, the same on every page); a point resting on a contended case
// carries the ⚠ marker (contention.js).
import {contendedTitle} from '../contention.js';
import {escapeHtml} from '../dom.js';
import {formatNs, formatNumber, formatRatio} from '../format.js';
import {strategyColour} from '../strategy_colours.js';
import {strategyMapAxes} from './axis.js';
import {drawChart, palette} from './setup.js';

// "1.50× [1.46×–1.55×]": a map point's paired runner-up / leader ratio with its 95%
// interval; the ratio alone when there is no interval (never "[0.00×–∞]").
export function mapRatioText(p) {
  if (!p.runner_up) return 'only strategy measured';
  if (p.ratio === null) return '–';
  if (p.ratio_low === null || p.ratio_high === null) return formatRatio(p.ratio);
  return `${formatRatio(p.ratio)} [${formatRatio(p.ratio_low)}–${formatRatio(p.ratio_high)}]`;
}

// {wait_us: 316, cpu_ns: 1000} -> "wait_us=316, cpu_ns=1,000".
export function paramsText(point) {
  return Object.entries(point).map(([k, v]) => `${k}=${formatNumber(v)}`).join(', ');
}

// points: MapPointJson of one group (all sweep the same parameters).
export function drawStrategyMap(el, points) {
  const swept = points[0].swept;
  const axisValues = swept.map((name) => [...new Set(points.map((p) => p.point[name]))].sort((a, b) => a - b));
  const xs = axisValues[0];
  const ys = swept.length > 1 ? axisValues[1] : [null];
  const data = points.map((p) => {
    const x = xs.indexOf(p.point[swept[0]]);
    const y = swept.length > 1 ? ys.indexOf(p.point[swept[1]]) : 0;
    const colour = strategyColour(p.winner);
    return {
      value: [x, y, 1],
      raw: p,
      itemStyle: {
        color: colour,
        opacity: p.tie ? 0.45 : 1,
        borderColor: '#ffffff',
        borderWidth: 1,
        decal: p.tie ? {symbol: 'rect', dashArrayX: [1, 0], dashArrayY: [2, 5], rotation: Math.PI / 4, color: 'rgba(0,0,0,0.35)'} : null,
      },
    };
  });
  const axes = strategyMapAxes(swept, xs.map((v) => formatNumber(v)), ys.map((v) => (v === null ? '' : formatNumber(v))));
  return drawChart(el, {
    grid: axes.grid,
    tooltip: {
      formatter: (param) => {
        const p = param.data.raw;
        const verdict = escapeHtml(p.verdict);
        const runner = p.runner_up ? p.ranked[1] : null;
        return `<b>${escapeHtml(paramsText(p.point))}</b><br>${verdict}` +
          `<br>leader ${escapeHtml(p.winner)} ${escapeHtml(formatNs(p.ranked[0].median_ns))}` +
          (runner ? `<br>runner-up ${escapeHtml(runner.strategy)} ${escapeHtml(formatNs(runner.median_ns))}` : '') +
          `<br>paired ratio ${escapeHtml(mapRatioText(p))}` +
          p.ranked.filter((e) => e.contended).map((e) => `<br>⚠ ${escapeHtml(e.strategy)}: ${escapeHtml(contendedTitle(e))}`)
            .join('');
      },
    },
    xAxis: axes.xAxis,
    yAxis: axes.yAxis,
    series: [{
      type: 'heatmap',
      data,
      label: {
        show: true, fontSize: 10, color: '#111111',
        formatter: (param) => (param.data.raw.ranked.some((e) => e.contended) ? '⚠ ' : '') +
          (param.data.raw.tie ? param.data.raw.kind : `${formatRatio(param.data.raw.ratio)}`),
      },
    }],
  });
}

// crossover: one entry of /api/v1/map's "crossovers" (its devices' intervals).
export function drawCrossover(el, crossover) {
  const devices = crossover.devices;
  const log = devices.every((d) => d.low > 0);
  const data = devices.map((d, i) => ({value: [d.low, d.high, d.estimate, i], raw: d}));
  return drawChart(el, {
    grid: {left: 8, right: 24, top: 12, bottom: 36, containLabel: true},
    tooltip: {
      formatter: (param) => {
        const d = param.data.raw;
        return `<b>${escapeHtml(d.name)}</b><br>${escapeHtml(crossover.to)} overtakes ${escapeHtml(crossover.from)}` +
          `<br>between ${crossover.param}=${formatNumber(d.low)} and ${formatNumber(d.high)}` +
          `<br>estimate ~${formatNumber(Math.round(d.estimate))}`;
      },
    },
    xAxis: {type: log ? 'log' : 'value', name: crossover.param, nameLocation: 'middle', nameGap: 24},
    yAxis: {type: 'category', data: devices.map((d) => d.name), inverse: true},
    series: [{
      type: 'custom',
      data,
      encode: {x: [0, 1, 2], y: 3},
      renderItem: (params, api) => {
        const lo = api.coord([api.value(0), api.value(3)]);
        const hi = api.coord([api.value(1), api.value(3)]);
        const est = api.coord([api.value(2), api.value(3)]);
        const stroke = {stroke: palette[0], lineWidth: 2};
        return {type: 'group', children: [
          {type: 'line', shape: {x1: lo[0], y1: lo[1], x2: hi[0], y2: hi[1]}, style: {...stroke, lineWidth: 3}},
          {type: 'line', shape: {x1: lo[0], y1: lo[1] - 6, x2: lo[0], y2: lo[1] + 6}, style: stroke},
          {type: 'line', shape: {x1: hi[0], y1: hi[1] - 6, x2: hi[0], y2: hi[1] + 6}, style: stroke},
          {type: 'circle', shape: {cx: est[0], cy: est[1], r: 5}, style: {fill: strategyColour(crossover.to)}},
        ]};
      },
    }],
  });
}
