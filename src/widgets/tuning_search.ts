/**
 * The Tuning view's search: a line saying how the configs were chosen, then its charts (best so far
 * against benchmarks and against wall time, and each parameter's importance). The dict is the `search`
 * part of `tilelab.views.tuning.data.tuning_data` (`views/tuning/data_search.py`): Python lays out every
 * mark, picks each colour (JupyterLab's variables, which follow the theme here) and writes each tooltip;
 * this draws them, as the snapshot's `snapshot_search.py` does. Text goes in through `textContent` only.
 */

import { h, svg } from './dom';
import { IBox } from './tuning_timeline';

interface IText {
  mark: 'text';
  x: number;
  y: number;
  text: string;
  colour: string;
  anchor: string;
  bold: boolean;
  /** Degrees, about (x, y); 0: upright. */
  rotate: number;
}

interface ILine {
  mark: 'line';
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  colour: string;
  dash: string | null;
  tip: string | null;
}

interface IDot {
  mark: 'dot';
  x: number;
  y: number;
  r: number;
  colour: string;
  tip: string;
}

interface IPath {
  mark: 'path';
  d: string;
  colour: string;
  width: number;
}

interface IRect extends IBox {
  mark: 'rect';
}

type Mark = IText | ILine | IDot | IPath | IRect;

interface IChart {
  title: string;
  width: number;
  height: number;
  marks: Mark[];
}

export interface ISearchData {
  kernel: string;
  /** How the configs were chosen (the sampler and its settings). */
  how: string;
  measured: number;
  space: number;
  charts: IChart[];
}

function withTip(node: SVGElement, tip: string | null): SVGElement {
  if (tip) {
    node.appendChild(svg('title', '', {}, tip));
  }
  return node;
}

function drawMark(mark: Mark): SVGElement {
  switch (mark.mark) {
    case 'text': {
      const where: Record<string, string | number> = mark.rotate
        ? { transform: `translate(${mark.x} ${mark.y}) rotate(${mark.rotate})` }
        : { x: mark.x, y: mark.y };
      const node = svg('text', '', { ...where, 'text-anchor': mark.anchor }, mark.text);
      node.style.fill = mark.colour;
      node.style.fontWeight = mark.bold ? '600' : '';
      return node;
    }
    case 'line': {
      const node = svg('line', '', { x1: mark.x1, y1: mark.y1, x2: mark.x2, y2: mark.y2 });
      node.style.stroke = mark.colour;
      node.style.strokeWidth = '1';
      node.style.strokeDasharray = mark.dash ?? '';
      return withTip(node, mark.tip);
    }
    case 'dot': {
      const node = svg('circle', '', { cx: mark.x, cy: mark.y, r: mark.r });
      node.style.fill = mark.colour;
      return withTip(node, mark.tip);
    }
    case 'path': {
      const node = svg('path', '', { d: mark.d });
      node.style.fill = 'none';
      node.style.stroke = mark.colour;
      node.style.strokeWidth = String(mark.width);
      return node;
    }
    case 'rect': {
      const node = svg('rect', '', { x: mark.x, y: mark.y, width: mark.width, height: mark.height });
      node.style.fill = mark.colour;
      return withTip(node, mark.tip);
    }
  }
}

function chart(c: IChart): SVGElement {
  const root = svg('svg', 'tl-tuning-chart', { width: c.width, height: c.height, viewBox: `0 0 ${c.width} ${c.height}`, role: 'img' });
  root.setAttribute('aria-label', c.title);
  root.dataset.tilelab = 'search-chart';
  root.append(...c.marks.map(drawMark));
  return root;
}

/** The line saying how the search chose its configs, and its charts side by side (wrapping when narrow). */
export function searchBlock(s: ISearchData): HTMLElement {
  const node = h('div', 'tilelab-search tl-tuning-search');
  const line = h('div', 'tl-tuning-caption');
  line.append(h('b', '', s.kernel), `: ${s.how}; ${s.measured} configs measured of ${s.space} in the space`);
  const charts = h('div', 'tl-tuning-charts');
  charts.append(...s.charts.map(chart));
  node.append(line, charts);
  return node;
}
