// ECharts, tree-shaken to the chart types the pages use, plus a small registry so a
// page can dispose its charts when the route changes. `window.fleetmark.chartOf(el)`
// hands the browser tests the instance drawn in an element.
import * as echarts from 'echarts/core';
import {BarChart, BoxplotChart, CustomChart, HeatmapChart, LineChart, ScatterChart} from 'echarts/charts';
import {
  DataZoomComponent, GridComponent, LegendComponent, MarkLineComponent, MarkPointComponent,
  TitleComponent, TooltipComponent, VisualMapComponent,
} from 'echarts/components';
import {CanvasRenderer} from 'echarts/renderers';

echarts.use([
  BarChart, BoxplotChart, CustomChart, HeatmapChart, LineChart, ScatterChart,
  DataZoomComponent, GridComponent, LegendComponent, MarkLineComponent, MarkPointComponent,
  TitleComponent, TooltipComponent, VisualMapComponent, CanvasRenderer,
]);

const live = new Set();

// Draws `option` into `el` (which must already be in the document) and returns the
// chart instance.
export function drawChart(el, option) {
  const chart = echarts.init(el, null, {renderer: 'canvas'});
  chart.setOption({animation: false, ...option});
  live.add(chart);
  return chart;
}

export function disposeCharts() {
  for (const chart of live) chart.dispose();
  live.clear();
}

window.addEventListener('resize', () => {
  for (const chart of live) chart.resize();
});

window.fleetmark = Object.assign(window.fleetmark || {}, {
  chartOf: (el) => echarts.getInstanceByDom(el),
});

export const palette = ['#3b6fd4', '#d4793b', '#3ba55c', '#b23bd4', '#d43b5a', '#3bc2d4', '#8a8f3b', '#6b6b6b'];
