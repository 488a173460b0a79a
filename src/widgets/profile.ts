/**
 * The Profile tab (a record with an ncu profile): per profiled launch its head line and sections —
 * Speed of Light bars, the roofline position (a table and a log-log plot), where the warps were (by
 * cell line, and by CUDA line under a fold), occupancy, launch and ncu's advice. The reply is
 * `tilelab.views.profile.data.profile_data`, the dict the snapshot draws: Python formats every label
 * and number and computes the plot's coordinates; text goes in through `textContent` only. It is
 * asked for when the tab is first shown, and again when the record's machine code arrives.
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

/** A line's warp samples: its share (`width`, 0..100, and as text) and its biggest stall reasons. */
interface ISampledLine {
  line: string;
  code: string;
  width: number;
  share: string;
  samples: number;
  /** [name, share of the line's samples, what it means]. */
  reasons: [string, string, string][];
  /** CUDA lines: the cell line it came from, "N: code". */
  cell?: string;
  /** Whose code the samples were at, in a warp-specialised kernel: ["consumer"], ["producer 54 %", "consumer 46 %"]. */
  warps: string[];
}

interface ISection {
  title: string;
  kind: 'bars' | 'roofline' | 'table' | 'advice' | 'samples';
  bars?: IBar[];
  rows?: [string, string][];
  plot?: IPlot | null;
  advice?: IAdvice[];
  /** What the samples are, said above them. */
  about?: string;
  summary?: string;
  cell?: ISampledLine[];
  /** Whether the sampled lines have a warps column (a warp-specialised kernel). */
  warps?: boolean;
  cuda?: ISampledLine[];
  note?: string;
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

/** A bar filled to `width` percent; `className` places and sizes its track. */
function track(width: number, className: string): HTMLElement {
  const node = h('span', className);
  const fill = h('span', 'tl-sol-fill');
  fill.style.width = `${width}%`;
  node.appendChild(fill);
  return node;
}

function bar(item: IBar): HTMLElement {
  const node = h('div', 'tl-sol-bar');
  node.dataset.tilelab = 'sol-bar';
  node.append(h('span', 'tl-sol-label', item.label), track(item.width, 'tl-sol-track'), h('span', '', item.text));
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

/** A cell holding `items` separated by commas: each item stays on one line, the list wraps between them. */
function commaCell(items: HTMLElement[]): HTMLTableCellElement {
  const cell = h('td');
  items.forEach((item, k) => cell.append(...(k ? [', ', item] : [item])));
  return cell;
}

/** A line of code in a narrow column: it wraps, up to three lines (a row's stall reasons take as many), then "…";
 * its tooltip is the whole line. */
function codeCell(text: string): HTMLTableCellElement {
  const cell = h('td', 'tl-samples-code');
  cell.title = text;
  cell.appendChild(h('div', 'tl-samples-clip', text));
  return cell;
}

function sampledTable(rows: ISampledLine[], head: string[], warps: boolean, tilelab: string, className: string): HTMLElement {
  const table = h('table', `tl-profile-table tl-samples ${className}${warps ? ' tl-samples-split' : ''}`);
  table.dataset.tilelab = tilelab;
  const heading = table.createTHead().insertRow();
  heading.append(...[...head, ...(warps ? ['warps'] : [])].map(text => h('th', '', text)));
  const body = table.createTBody();
  for (const row of rows) {
    const share = h('td', 'tl-samples-share');
    share.append(track(row.width, 'tl-samples-track'), row.share);
    const code = codeCell(row.code);
    const reasons = commaCell(
      row.reasons.map(([name, part, meaning]) => {
        const reason = h('span', 'tl-samples-reason', `${name} ${part}`);
        reason.title = meaning;
        return reason;
      })
    );
    const cells = [share, h('td', '', row.line), code];
    if (row.cell !== undefined) {
      cells.push(codeCell(row.cell));
    }
    cells.push(reasons);
    if (warps) {
      cells.push(commaCell(row.warps.map(part => h('span', 'tl-samples-warp', part))));
    }
    body.insertRow().append(...cells);
  }
  return table;
}

function samples(part: ISection, node: HTMLElement): void {
  node.appendChild(h('div', 'tl-profile-muted', part.about ?? ''));
  if (part.summary) {
    const summary = h('div', '', part.summary);
    summary.dataset.tilelab = 'samples-summary';
    node.appendChild(summary);
  }
  if (part.cell?.length) {
    node.appendChild(sampledTable(part.cell, ['share', 'cell line', 'code', 'why not issuing'], Boolean(part.warps), 'samples-by-cell-line', 'tl-samples-by-cell'));
  }
  if (part.cuda?.length) {
    const fold = h('details', 'tl-samples-fold');
    fold.append(
      h('summary', '', `by CUDA line (the ${part.cuda.length} with the most samples)`),
      sampledTable(part.cuda, ['share', 'CUDA line', 'code', 'cell line', 'why not issuing'], Boolean(part.warps), 'samples-by-cuda-line', 'tl-samples-by-cuda')
    );
    node.appendChild(fold);
  }
  if (part.note) {
    const note = h('div', 'tl-profile-warn', part.note);
    note.dataset.tilelab = 'samples-note';
    node.appendChild(note);
  }
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
  } else if (part.kind === 'samples') {
    samples(part, node);
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
