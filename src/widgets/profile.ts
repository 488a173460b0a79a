/**
 * The Profile tab (a record with an ncu profile): per profiled launch its head line and sections —
 * Speed of Light bars, the roofline position (a table and a log-log plot), occupancy, launch and
 * ncu's advice. The reply is `tilelab.views.profile.data.profile_data`, the dict the snapshot draws:
 * Python formats every label and number and computes the plot's coordinates; text goes in through
 * `textContent` only. It is asked for once, when the tab is first shown.
 */

import { h, svg } from './dom';

interface IBar {
  label: string;
  /** The bar's fill, 0..100. */
  width: number;
  text: string;
}

interface ITick {
  at: number;
  label: string;
}

interface IPlot {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
  xticks: ITick[];
  yticks: ITick[];
  /** The roof's corners, in px. */
  roof: [number, number][];
  point: { x: number; y: number; label: string };
  x_title: string;
  y_title: string;
}

interface IAdvice {
  rule: string;
  kind: string;
  speedup: string;
  description: string;
}

interface ISection {
  title: string;
  kind: 'bars' | 'roofline' | 'table' | 'advice';
  bars?: IBar[];
  rows?: [string, string][];
  plot?: IPlot | null;
  advice?: IAdvice[];
}

interface IKernel {
  head: string;
  duration: string;
  sections: ISection[];
}

export interface IProfileData {
  kernels: IKernel[];
  device: string;
  notes: string[];
}

function bar(item: IBar): HTMLElement {
  const node = h('div', 'tl-sol-bar');
  node.dataset.tilelab = 'sol-bar';
  const track = h('span', 'tl-sol-track');
  const fill = h('span', 'tl-sol-fill');
  fill.style.width = `${item.width}%`;
  track.appendChild(fill);
  node.append(h('span', 'tl-sol-label', item.label), track, h('span', '', item.text));
  return node;
}

function rowsTable(rows: [string, string][], tilelab?: string): HTMLElement {
  const table = h('table', 'tl-profile-table');
  if (tilelab) {
    table.dataset.tilelab = tilelab;
  }
  const body = table.createTBody();
  for (const [label, value] of rows) {
    body.insertRow().append(h('td', '', label), h('td', '', value));
  }
  return table;
}

/** The roofline plot: grid lines and their labels, the roof, the kernel's point (its label as a tooltip). */
function plot(p: IPlot): SVGElement {
  const root = svg('svg', 'tl-roofline', { width: p.width, height: p.height, viewBox: `0 0 ${p.width} ${p.height}`, role: 'img' });
  root.setAttribute('aria-label', p.point.label);
  root.dataset.tilelab = 'roofline-plot';
  for (const tick of p.xticks) {
    root.append(
      svg('line', 'tl-roofline-grid', { x1: tick.at, x2: tick.at, y1: p.top, y2: p.height - p.bottom }),
      svg('text', 'tl-roofline-label', { x: tick.at, y: p.height - p.bottom + 13, 'text-anchor': 'middle' }, tick.label)
    );
  }
  for (const tick of p.yticks) {
    root.append(
      svg('line', 'tl-roofline-grid', { x1: p.left, x2: p.width - p.right, y1: tick.at, y2: tick.at }),
      svg('text', 'tl-roofline-label', { x: p.left - 4, y: tick.at + 4, 'text-anchor': 'end' }, tick.label)
    );
  }
  const d = p.roof.map(([x, y], k) => `${k === 0 ? 'M' : 'L'}${x.toFixed(1)},${y.toFixed(1)}`).join(' ');
  const roof = svg('path', 'tl-roofline-roof', { d });
  roof.dataset.tilelab = 'roof';
  const point = svg('circle', 'tl-roofline-point', { cx: p.point.x, cy: p.point.y, r: 4 });
  point.dataset.tilelab = 'roofline-point';
  point.appendChild(svg('title', '', {}, p.point.label));
  root.append(
    roof,
    point,
    svg('text', 'tl-roofline-label', { x: Math.round((p.width + p.left) / 2), y: p.height - 4, 'text-anchor': 'middle' }, p.x_title),
    svg(
      'text',
      'tl-roofline-label',
      { transform: `translate(10 ${Math.round((p.height + p.top - p.bottom) / 2)}) rotate(-90)`, 'text-anchor': 'middle' },
      p.y_title
    )
  );
  return root;
}

function advice(items: IAdvice[]): HTMLElement {
  const list = h('ol', 'tl-profile-advice');
  for (const item of items) {
    const entry = h('li');
    entry.dataset.tilelab = 'advice';
    entry.append(h('b', '', item.rule), ' ', h('span', 'tl-profile-warn', `${item.kind}${item.speedup}`), h('br'), h('span', '', item.description));
    list.appendChild(entry);
  }
  return list;
}

function section(part: ISection): HTMLElement {
  const node = h('div', 'tl-profile-section');
  node.appendChild(h('div', 'tl-profile-title', part.title));
  if (part.kind === 'bars') {
    node.append(...(part.bars ?? []).map(bar));
  } else if (part.kind === 'roofline') {
    node.appendChild(rowsTable(part.rows ?? [], 'roofline'));
    if (part.plot) {
      node.appendChild(plot(part.plot));
    }
  } else if (part.kind === 'advice') {
    node.appendChild(advice(part.advice ?? []));
  } else {
    node.appendChild(rowsTable(part.rows ?? []));
  }
  return node;
}

function kernelBlock(kernel: IKernel): HTMLElement {
  const node = h('div', 'tl-profile-kernel');
  node.dataset.tilelab = 'profile-kernel';
  node.appendChild(h('div', 'tl-profile-head', kernel.duration ? `${kernel.head} — ${kernel.duration}` : kernel.head));
  node.append(...kernel.sections.map(section));
  return node;
}

/** Fill `node` with the Profile of `data` (for `requestedTab`). */
export function fillProfile(node: HTMLDivElement, data: IProfileData): void {
  const body = h('div', 'tl-profile-body');
  body.dataset.tilelab = 'profile';
  body.append(...data.kernels.map(kernelBlock));
  if (!data.kernels.length) {
    body.appendChild(h('div', 'tl-profile-muted', 'ncu profiled no launch of this kernel'));
  }
  if (data.device) {
    body.appendChild(h('div', 'tl-profile-muted', `ran on ${data.device}`));
  }
  for (const note of data.notes) {
    const line = h('div', 'tl-profile-muted', note);
    line.dataset.tilelab = 'profile-note';
    body.appendChild(line);
  }
  node.replaceChildren(body);
}
