/**
 * The Tuning view's timeline: its one-line summary, a Gantt chart (one row per config, one bar per
 * phase) and the legend. The dict is the `timeline` part of `tilelab.views.tuning.data.tuning_data`
 * (`views/tuning/data_timeline.py`): Python lays out every box, tick and label, picks each colour and
 * writes each tooltip; this draws them, as the snapshot's `snapshot_timeline.py` does.
 */

import { h, svg } from './dom';

interface ITick {
  x: number;
  text: string;
}

interface IRow {
  /** The config in full (the bars' tooltips say it, and the label's own where it is cut), and as the chart shows it. */
  label: string;
  text: string;
  y: number;
}

/** A filled box of a chart, with its tooltip (a timeline's phase; a search's importance bar). */
export interface IBox {
  x: number;
  y: number;
  width: number;
  height: number;
  colour: string;
  tip: string;
}

interface IBar extends IBox {
  phase: string;
}

export interface ITimelineData {
  summary: string;
  title: string;
  width: number;
  height: number;
  /** The tick lines start at `tick_top`; their labels stand at `tick_text_y`. */
  tick_top: number;
  tick_text_y: number;
  ticks: ITick[];
  /** Where the row labels end (they are right-aligned). */
  label_x: number;
  rows: IRow[];
  bars: IBar[];
  legend: { phase: string; colour: string }[];
  /** How many configs the chart leaves out, said in words (null: none). */
  more: string | null;
}

function chart(t: ITimelineData): SVGElement {
  const root = svg('svg', 'tl-tuning-chart', { width: t.width, height: t.height, viewBox: `0 0 ${t.width} ${t.height}`, role: 'img' });
  root.dataset.tilelab = 'tuning-timeline';
  root.appendChild(svg('title', '', {}, t.title));
  for (const tick of t.ticks) {
    root.append(
      svg('line', 'tl-tuning-grid', { x1: tick.x, y1: t.tick_top, x2: tick.x, y2: t.height }),
      svg('text', 'tl-tuning-tick', { x: tick.x, y: t.tick_text_y, 'text-anchor': 'middle' }, tick.text)
    );
  }
  for (const row of t.rows) {
    const label = svg('text', 'tl-tuning-config', { x: t.label_x, y: row.y, 'text-anchor': 'end' }, row.text);
    if (row.text === row.label) {
      root.appendChild(label);
    } else {
      const whole = svg('g', '', {});
      whole.append(svg('title', '', {}, row.label), label);
      root.appendChild(whole);
    }
  }
  for (const bar of t.bars) {
    const rect = svg('rect', '', { 'data-phase': bar.phase, x: bar.x, y: bar.y, width: bar.width, height: bar.height });
    rect.style.fill = bar.colour;
    rect.appendChild(svg('title', '', {}, bar.tip));
    root.appendChild(rect);
  }
  return root;
}

function legend(items: ITimelineData['legend']): HTMLElement {
  const node = h('div', 'tl-tuning-legend');
  for (const item of items) {
    const key = h('span', 'tl-tuning-key');
    const swatch = h('span', 'tl-tuning-swatch');
    swatch.style.background = item.colour;
    key.append(swatch, item.phase);
    node.appendChild(key);
  }
  return node;
}

/** The summary line, the chart, what it leaves out and the legend. */
export function timelineBlock(t: ITimelineData): HTMLElement {
  const node = h('div', 'tilelab-timeline tl-tuning-timeline');
  const summary = h('div', 'tl-tuning-summary', t.summary);
  summary.dataset.tilelab = 'timeline-summary';
  node.append(summary, chart(t));
  if (t.more) {
    node.appendChild(h('div', 'tl-tuning-small', t.more));
  }
  node.appendChild(legend(t.legend));
  return node;
}
