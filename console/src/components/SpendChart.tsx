// Spend per UTC day as bars, drawn with uPlot (a canvas chart of about 20 KB gzipped). Values are
// plotted in integer micros and every figure shown (axis, legend) goes through formatMicros, so the
// chart never prints a float's rounding. The same figures are in the cards and the table beside it.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatMicros } from '../money';

export interface DaySpend {
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  micros: number;
}

const HEIGHT = 180;
const ACCENT = '#0a58ca';

const showMicros = (value: number | null) => (value === null ? '—' : formatMicros(Math.round(value)));
const showDay = (seconds: number | null) => (seconds === null ? '—' : new Date(seconds * 1000).toISOString().slice(0, 10));

export function SpendChart({ days, title }: { days: DaySpend[]; title: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const data: uPlot.AlignedData = [days.map((entry) => Date.parse(`${entry.day}T00:00:00Z`) / 1000), days.map((entry) => entry.micros)];
    const chart = new uPlot(
      {
        width: element.clientWidth,
        height: HEIGHT,
        // Days are UTC days, whatever the browser's time zone.
        tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
        scales: { x: { time: true }, y: { range: (_chart, _min, max) => [0, Math.max(1, max)] } },
        series: [
          { label: 'Day', value: (_chart, seconds) => showDay(seconds) },
          {
            label: 'Spend',
            fill: ACCENT,
            stroke: ACCENT,
            paths: uPlot.paths.bars?.({ size: [0.7, 40] }),
            points: { show: false },
            value: (_chart, micros) => showMicros(micros),
          },
        ],
        axes: [{}, { size: 80, values: (_chart, ticks) => ticks.map(showMicros) }],
      },
      data,
      element,
    );
    // Follows the page's width (a phone turned, a window resized), on the next frame.
    let frame = 0;
    const resize = new ResizeObserver(() => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => chart.setSize({ width: element.clientWidth, height: HEIGHT }));
    });
    resize.observe(element);
    return () => {
      cancelAnimationFrame(frame);
      resize.disconnect();
      chart.destroy();
    };
  }, [days]);
  return <div ref={box} class="chart" role="img" aria-label={title} />;
}
