/** The per-minute completed/failed chart (uPlot; its CSS file is bundled with the UI's). */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Series } from './types.js';

/** Draws `series` (oldest minute on the left) into `el`. */
export function throughputChart(el: HTMLElement, series: Series, width = 320, height = 110): uPlot {
  const n = series.completed.length;
  const xs: number[] = [];
  const completed: number[] = [];
  const failed: number[] = [];
  for (let i = n - 1; i >= 0; i--) {
    xs.push((series.newestMinute - i * 60_000) / 1000);
    completed.push(series.completed[i]);
    failed.push(series.failed[i]);
  }
  return new uPlot(
    {
      width,
      height,
      legend: { show: false },
      cursor: { show: true, points: { show: false } },
      axes: [
        { size: 24, font: '10px sans-serif' },
        { size: 32, font: '10px sans-serif' },
      ],
      series: [{}, { label: 'completed/min', stroke: '#2f8f46', width: 1.5 }, { label: 'failed/min', stroke: '#c0392b', width: 1.5 }],
    },
    [xs, completed, failed],
    el,
  );
}
