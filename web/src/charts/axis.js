// Axis rules shared by the pages' charts (pure: tested in node, tests/web/page_text_test.mjs).

// Values spanning at least this factor (largest CI end / smallest) are drawn on a log
// axis unless the URL says otherwise: on a linear axis a 2 µs bar beside a 40 ms one is
// a zero-width bar.
export const kLogAxisSpan = 10;

// One value axis for every device's bar chart of a group, so a bar's length compares
// across panels: rows are [{value, low, high}] of all the group's devices. `logParam`:
// the URL's log= ('1' forces a log axis, '0' a linear one, anything else decides by the
// values' span). Returns {log, min, max} (min/max undefined when nothing is positive).
export function sharedBarAxis(rows, logParam) {
  const ends = rows.flatMap((r) => [r.value, r.low, r.high]).filter((v) => Number.isFinite(v) && v > 0);
  if (ends.length === 0) return {log: logParam === '1', min: undefined, max: undefined};
  const lo = Math.min(...ends);
  const hi = Math.max(...ends);
  const log = logParam === '1' || (logParam !== '0' && hi / lo >= kLogAxisSpan);
  // A log axis starts a little below the smallest end so its bar has a length.
  return log ? {log, min: lo / 1.5, max: hi * 1.1} : {log, min: 0, max: hi * 1.05};
}

// The heatmap of a strategy map: the first swept parameter across, the second (if any)
// up, each axis named after its parameter in the middle of its side; `grid.left` leaves
// room for the rotated y-axis name (ECharts' containLabel counts labels, not names).
export function strategyMapAxes(swept, xLabels, yLabels) {
  const twoD = swept.length > 1;
  return {
    grid: {left: twoD ? 28 : 8, right: 16, top: 12, bottom: 36, containLabel: true},
    xAxis: {type: 'category', name: swept[0], nameLocation: 'middle', nameGap: 24, data: xLabels},
    yAxis: twoD
      ? {type: 'category', name: swept[1], nameLocation: 'middle', nameRotate: 90, nameGap: 44, data: yLabels}
      : {type: 'category', data: yLabels, axisLabel: {show: false}, axisTick: {show: false}},
  };
}
