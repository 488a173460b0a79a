/**
 * The Tuning view (`tilelab.tune`'s result, running or done): the progress (counts, state, one bar per
 * count, notes, the re-benchmark's verdict, coverage, the GPU's state), the latency heat map, a
 * search's charts (`tuning_search.ts`), the timeline (`tuning_timeline.ts`) and the rows. The reply to a
 * `tuning` request is `tilelab.views.tuning.data.tuning_data`, the dict the snapshot draws:
 * Python decides every label, number and colour; text goes in through `textContent` only. The
 * kernel bumps the synced `revision` as the sweep goes on, and the view asks again. A click on a column's
 * name asks for the rows in that column's order (`{sort: {column, descending}}`; the kernel sorts every row), and
 * typing in the filter above the rows asks for those it keeps (`{filter}`, read by
 * `tilelab/views/tuning/row_filter.py`); a click on a heat map's cell types the filter of its configs. The filter
 * bar is made once, so a redraw never takes its focus; a redrawn cell or column name gets it back.
 */

import { Channel } from './channel';
import { activates, h, keepKeys, message } from './dom';
import { IModel, watch } from './model';
import { ISearchData, searchBlock } from './tuning_search';
import { ITimelineData, timelineBlock } from './tuning_timeline';

interface IBar {
  label: string;
  text: string;
  /** The fill, 0..100. */
  width: number;
  colour: string;
}

interface IProgress {
  kernel: string;
  where: string;
  counts: string;
  state: string;
  bars: IBar[];
  notes: string[];
  verdict: string | null;
  coverage: string | null;
  gpu: string | null;
}

interface IHeatCell {
  text: string;
  background: string;
  colour: string;
  best: boolean;
}

interface IPivot {
  caption: string;
  corner: string;
  columns: string[];
  /** The outline of the best cell. */
  mark: string;
  /** Per cell, the filter that keeps its configs (null: none can be typed); a click types it. */
  rows: { label: string; cells: (IHeatCell | null)[]; filters: (string | null)[] }[];
}

/** The order the user asked for by clicking a column's name. */
interface ISort {
  column: string;
  descending: boolean;
}

interface IRows {
  columns: string[];
  /** The columns' names as shown: the sorted one with its arrow. */
  headers: string[];
  numeric: boolean[];
  cells: string[][];
  /** A cell's text colour (a status's), null for the page's. */
  colours: (string | null)[][];
  /** The order the rows are in (null: the space's). */
  sort: ISort | null;
  /** How many rows the sweep has. */
  of: number;
  /** Says when not every row is shown, else null. */
  note: string | null;
  /** The filter as applied (null: none). */
  filter: string | null;
  /** Why the typed filter could not be read (every row then counts), else null. */
  filter_error: string | null;
  /** A filter of this sweep's own columns and values, for the box's placeholder. */
  example: string;
}

export interface ITuningData {
  progress: IProgress;
  pivot: IPivot | null;
  search: ISearchData | null;
  timeline: ITimelineData | null;
  rows: IRows;
}

function progress(p: IProgress): HTMLElement[] {
  const state = h('span', '', p.state);
  state.dataset.tilelab = 'tuning-state';
  const head = h('div');
  head.append(h('b', '', p.kernel), ` ${p.where}: ${p.counts}, `, state);
  const lines: HTMLElement[] = [head];
  for (const bar of p.bars) {
    const fill = h('span', 'tl-tuning-fill');
    fill.style.width = `${bar.width}%`;
    fill.style.background = bar.colour;
    const track = h('span', 'tl-tuning-track');
    track.appendChild(fill);
    const line = h('div', 'tl-tuning-bar');
    line.append(h('span', 'tl-tuning-label tl-tuning-muted', bar.label), track, h('span', '', bar.text));
    lines.push(line);
  }
  lines.push(...p.notes.map(note => h('div', 'tl-tuning-muted', note)));
  if (p.verdict !== null) {
    const verdict = h('span', '', p.verdict);
    verdict.dataset.tilelab = 'tuning-verdict';
    const line = h('div');
    line.appendChild(verdict);
    lines.push(line);
  }
  for (const text of [p.coverage, p.gpu]) {
    if (text !== null) {
      lines.push(h('div', '', text));
    }
  }
  return lines;
}

function heatCell(cell: IHeatCell | null, mark: string): HTMLTableCellElement {
  if (cell === null) {
    return h('td', 'tl-num tl-tuning-muted', '—');
  }
  const td = h('td', cell.best ? 'tl-num tl-tuning-best' : 'tl-num', cell.text);
  td.dataset.best = String(cell.best);
  td.style.background = cell.background;
  td.style.color = cell.colour;
  if (cell.best) {
    td.style.outlineColor = mark;
  }
  return td;
}

/** Clicking a cell (or Enter on it) filters the rows to its configs, the failed config of an empty cell too; when
 * they are what the rows show (`applied`), it shows every row again. */
function filtering(
  td: HTMLTableCellElement,
  filter: string | null,
  applied: string | null,
  onFilter: (text: string) => void
): HTMLTableCellElement {
  if (filter !== null) {
    const again = filter === applied;
    td.classList.add('tl-tuning-cell-filter');
    td.dataset.focus = `cell ${filter}`;
    td.title = again ? 'show every row again' : `show the rows of ${filter}`;
    activates(td, () => onFilter(again ? '' : filter));
  }
  return td;
}

function pivot(p: IPivot | null, applied: string | null, onFilter: (text: string) => void): HTMLElement[] {
  if (p === null) {
    return [];
  }
  const table = h('table', 'tl-tuning-table');
  table.dataset.tilelab = 'tuning-pivot';
  keepKeys(table); // Enter on a cell filters; JupyterLab would take it to edit the notebook's cell
  const head = table.createTHead().insertRow();
  head.append(h('th', 'tl-tuning-muted', p.corner), ...p.columns.map(column => h('th', 'tl-num', column)));
  const body = table.createTBody();
  for (const row of p.rows) {
    const cells = row.cells.map((cell, k) => filtering(heatCell(cell, p.mark), row.filters[k], applied, onFilter));
    body.insertRow().append(h('th', 'tl-num', row.label), ...cells);
  }
  return [h('div', 'tl-tuning-caption tl-tuning-muted', p.caption), table];
}

/** Clicking a column's name (or Enter on it) sorts every row by it; clicking it again reverses the order. */
function header(r: IRows, k: number, side: string, onSort: (sort: ISort) => void): HTMLElement {
  const column = r.columns[k];
  const now = r.sort !== null && r.sort.column === column ? r.sort : null;
  const sorts = h('button', 'tl-tuning-sort', r.headers[k]);
  sorts.type = 'button';
  sorts.title = now ? 'reverse the order' : `sort every row by ${column}`;
  sorts.dataset.focus = `sort ${column}`;
  sorts.addEventListener('click', () => onSort({ column, descending: now !== null && !now.descending }));
  const th = h('th', `${side} tl-tuning-sortable`);
  th.setAttribute('aria-sort', now ? (now.descending ? 'descending' : 'ascending') : 'none');
  th.appendChild(sorts);
  return th;
}

function rows(r: IRows, onSort: (sort: ISort) => void): HTMLElement[] {
  const note = r.note === null ? [] : [h('div', 'tl-tuning-muted', r.note)];
  if (!r.cells.length) {
    return [...note, h('div', 'tl-tuning-muted', r.of ? 'no row matches the filter' : 'no rows yet')];
  }
  const side = (k: number): string => (r.numeric[k] ? 'tl-num' : '');
  const table = h('table', 'tl-tuning-table');
  table.dataset.tilelab = 'tuning-rows';
  keepKeys(table); // Enter on a column's name sorts; JupyterLab would take it to edit the notebook's cell
  table.createTHead().insertRow().append(...r.columns.map((_, k) => header(r, k, side(k), onSort)));
  const body = table.createTBody();
  r.cells.forEach((texts, line) => {
    body.insertRow().append(
      ...texts.map((text, k) => {
        const td = h('td', side(k), text);
        const colour = r.colours[line][k];
        if (colour) {
          td.style.color = colour;
        }
        return td;
      })
    );
  });
  const scroll = h('div', 'tl-tuning-scroll');
  scroll.appendChild(table);
  return [...note, scroll];
}

/** The filter above the rows, made once: typing in it calls `onFilter`; `show` says why a filter could not be read
 * and puts an example of the sweep's own columns and values in the empty box. */
class FilterBar {
  readonly node = h('div', 'tl-toolbar tl-tuning-filter');

  constructor(onFilter: (text: string) => void) {
    const input = this._input;
    input.type = 'search';
    input.title =
      'Show the rows that meet every term: column=value, column!=value, column<number (or <=, >, >=), ' +
      'or a word that some value holds; | between values: any of them (block_M=64|128); ' +
      'quotes keep spaces ("shared memory")';
    input.setAttribute('aria-label', 'filter the rows');
    keepKeys(input);
    input.addEventListener('input', () => onFilter(input.value));
    this._onFilter = onFilter;
    this._problem.dataset.tilelab = 'tuning-filter-error';
    this.node.append(input, this._problem);
  }

  show(r: IRows): void {
    this.node.hidden = r.of === 0;
    this._problem.textContent = r.filter_error ?? '';
    this._input.placeholder = `filter: ${r.example}`;
    this._input.size = Math.max(40, this._input.placeholder.length + 4); // the whole example shows
  }

  /** Put `text` in the box, as if typed. */
  type(text: string): void {
    this._input.value = text;
    this._onFilter(text);
  }

  private _onFilter: (text: string) => void;
  private _input = h('input', 'tl-tuning-filter-input');
  private _problem = h('span', 'tl-error');
}

/** The view's parts: what the data redraws, and the filter bar between them that it keeps. */
interface IParts {
  top: HTMLElement;
  filter: FilterBar;
  rows: HTMLElement;
}

/** What has the focus among the parts' controls a redraw makes again (a heat map's cell, a column's name): its
 * `data-focus`, or null. */
function focused(parts: IParts): string | null {
  const active = document.activeElement;
  const inside = active instanceof HTMLElement && (parts.top.contains(active) || parts.rows.contains(active));
  return inside ? (active.dataset.focus ?? null) : null;
}

/** Give the focus back to the redrawn control that `key` names, if it is still there. */
function refocus(parts: IParts, key: string | null): void {
  if (key === null) {
    return;
  }
  const controls = [parts.top, parts.rows].flatMap(part => Array.from(part.querySelectorAll<HTMLElement>('[data-focus]')));
  controls.find(control => control.dataset.focus === key)?.focus({ preventScroll: true });
}

/** Draw `data` into `parts`, keeping where the rows were scrolled to (to the top when `reordered`) and which control
 * had the focus. */
function draw(parts: IParts, data: ITuningData, onSort: (sort: ISort) => void, reordered: boolean): void {
  const focus = focused(parts);
  const before = parts.rows.querySelector('.tl-tuning-scroll');
  const [top, left] = before && !reordered ? [before.scrollTop, before.scrollLeft] : [0, 0];
  const search = data.search ? [searchBlock(data.search)] : [];
  const timeline = data.timeline ? [timelineBlock(data.timeline)] : [];
  const onCell = (text: string): void => parts.filter.type(text);
  const map = pivot(data.pivot, data.rows.filter, onCell);
  parts.top.replaceChildren(...progress(data.progress), ...map, ...search, ...timeline);
  parts.filter.show(data.rows);
  parts.rows.replaceChildren(...rows(data.rows, onSort));
  const after = parts.rows.querySelector('.tl-tuning-scroll');
  if (after) {
    after.scrollTop = top;
    after.scrollLeft = left;
  }
  refocus(parts, focus);
}

export function renderTuning(model: IModel, el: HTMLElement): () => void {
  const channel = new Channel(model);
  const root = h('div', 'tilelab-tuning tl-tuning');
  const status = h('div', 'tl-tuning');
  message(status, 'loading…');
  el.appendChild(status);
  let asking = false;
  let again = false;
  let disposed = false;
  let sort: ISort | null = null;
  let filter = '';
  let reordered = false;
  const onSort = (next: ISort): void => {
    sort = next;
    reordered = true;
    void ask();
  };
  const parts: IParts = {
    top: h('div'),
    filter: new FilterBar(text => {
      filter = text;
      reordered = true;
      void ask();
    }),
    rows: h('div')
  };
  root.append(parts.top, parts.filter.node, parts.rows);
  // One request at a time: revisions (or a sort, or a filter) that arrive meanwhile make one more request when it
  // is answered, with the latest of each.
  const ask = async (): Promise<void> => {
    if (asking) {
      again = true;
      return;
    }
    asking = true;
    try {
      do {
        again = false;
        const revision = String(model.get('revision'));
        const data = await channel.request<ITuningData>('tuning', {
          ...(sort ? { sort } : {}),
          ...(filter.trim() ? { filter } : {})
        });
        if (disposed) {
          return;
        }
        draw(parts, data, onSort, reordered);
        reordered = false;
        root.dataset.revision = revision;
        status.remove();
        if (root.parentElement !== el) {
          el.appendChild(root); // once: moving it again would take the filter's focus
        }
      } while (again);
    } catch (error) {
      if (!disposed) {
        message(status, (error as Error).message, 'error');
        el.prepend(status);
      }
    } finally {
      asking = false;
    }
  };
  const unwatch = watch(model, 'revision', () => void ask());
  void ask();
  return () => {
    disposed = true;
    unwatch();
    channel.dispose();
    root.remove();
    status.remove();
  };
}
