/**
 * The Overview tab: the compile's facts as a table of label / value rows and, for a failed compile,
 * the error with the cell line it names (a link into the cell's editor) and the full log. The reply
 * is `tilelab.views.overview.data.overview_data`, the dict the snapshot draws; its text goes in
 * through `textContent` only. It is asked for once, when the tab is first shown.
 */

import { h, linkLines } from './dom';

interface IRow {
  label: string;
  text: string;
  /** How the value reads: "" plain, "error", "warning", "provenance" (the cache line). */
  kind: '' | 'error' | 'warning' | 'provenance';
  /** A muted note after the value ("" for none). */
  note: string;
}

interface IError {
  title: string;
  /** "this cell", a file, or null when there is nothing to say. */
  place: string | null;
  line: number | null;
  /** The line is in the cell: it links to the cell's editor. */
  link: boolean;
  message: string;
  log: string;
}

export interface IOverviewData {
  /** The error of a failed compile (a reply's `error` would say the request itself failed). */
  failure: IError | null;
  rows: IRow[];
}

const KIND_CLASS: Record<IRow['kind'], string> = {
  '': '',
  error: 'tl-overview-bad',
  warning: 'tl-overview-warn',
  provenance: ''
};

function errorBox(error: IError): HTMLElement[] {
  const box = h('div', 'tl-overview-error');
  box.dataset.tilelab = 'error';
  const title = h('div', 'tl-overview-error-title', error.title);
  if (error.place !== null) {
    title.append(` — ${error.place}`);
    if (error.line !== null) {
      const line = h('span', error.link ? 'tl-line-link' : '', `line ${error.line}`);
      if (error.link) {
        line.dataset.tilelabLine = String(error.line);
      }
      title.append(', ', line);
    }
  }
  box.append(title, h('pre', 'tl-overview-message', error.message));
  if (!error.log) {
    return [box];
  }
  const log = h('details', 'tl-overview-log');
  log.append(h('summary', '', 'full log'), h('pre', 'tl-overview-message', error.log));
  return [box, log];
}

function factsTable(rows: IRow[]): HTMLElement {
  const table = h('table', 'tl-overview-table');
  table.dataset.tilelab = 'overview';
  const body = table.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    const label = h('td');
    label.appendChild(h('b', '', row.label));
    const value = h('td');
    const text = h('span', KIND_CLASS[row.kind], row.text);
    if (row.kind === 'provenance') {
      text.dataset.tilelab = 'provenance';
    }
    value.appendChild(text);
    if (row.note) {
      value.append(' ', h('span', 'tl-overview-note', row.note));
    }
    tr.append(label, value);
  }
  return table;
}

/** Fill `node` with the Overview of `data` (for `requestedTab`). */
export function fillOverview(node: HTMLDivElement, data: IOverviewData): void {
  node.replaceChildren(...(data.failure ? errorBox(data.failure) : []), factsTable(data.rows));
  linkLines(node);
}
