/**
 * The Passes tab: the pass list (keyboard-driven, resizable, changed/unchanged
 * marks), the selected pass diffed against the pass before it or any chosen
 * pass (side by side or unified, whitespace ignored or not), the IR after any
 * pass, and a search over every pass's IR that lists where a match first
 * appears, grows or shrinks. Texts come from the kernel on request; replies
 * are kept, so going back to a pass is immediate.
 */

import { Channel } from './channel';
import { SearchQuery } from '@codemirror/search';
import { CodePane, showMatches } from './codepane';
import { DiffView, fittedMode, splitFits } from './diffview';
import { button, checkbox, h, keepKeys, message, watchWidth } from './dom';
import { IModel, save, watch } from './model';
import { KeyList } from './passlist';
import { Splitter } from './splitter';

interface IPassRow {
  index: number;
  name: string;
  changed: boolean;
  added: number;
  removed: number;
  ms: number;
}

interface IDiffReply {
  index: number;
  name: string;
  changed: boolean;
  base: number | null;
  base_name: string | null;
  ignore_whitespace: boolean;
  before: string;
  after: string;
  changes: number[][];
  added: number;
  removed: number;
}

interface IIrReply {
  index: number;
  name: string;
  text: string;
}

interface IHit {
  index: number;
  name: string;
  kind: 'first' | 'adds' | 'removes';
  before: number;
  after: number;
  side: 'a' | 'b';
  line: number | null;
}

interface ISearchReply {
  query: string;
  regex: boolean;
  case: boolean;
  hits: IHit[];
  final: number;
}

interface IPendingSearch {
  query: string;
  side: 'a' | 'b';
  line: number | null;
  regexp: boolean;
  caseSensitive: boolean;
}

const PREFETCH_CHARS = 8_000_000; // IR text asked for ahead, at most

/** Resolves when the browser is idle (or soon, where it cannot tell). */
function idle(): Promise<void> {
  return new Promise(resolve => {
    const request = (window as any).requestIdleCallback as ((callback: () => void, options: object) => number) | undefined;
    if (request) {
      request(() => resolve(), { timeout: 500 });
    } else {
      window.setTimeout(resolve, 50);
    }
  });
}

const HIT_WORDS = { first: 'first contains', adds: 'adds', removes: 'removes' };
const MODES: [string, string, string][] = [
  ['split', 'Side by side', 'The IR before (left) and after (right) this pass, scrolled together'],
  ['unified', 'Unified', 'One column: removed lines above the lines that replace them'],
  ['ir', 'IR after this pass', 'The whole IR right after this pass']
];

export class PassesTab {
  readonly node: HTMLDivElement;

  constructor(model: IModel, channel: Channel) {
    this._model = model;
    this._channel = channel;
    this._rows = model.get('passes') as IPassRow[];
    this._rows.forEach((row, position) => this._position.set(row.index, position));
    this.node = h('div', 'tl-passes');
    this.node.append(this._toolbar(), this._searchBar(), this._body());
    this._unwatch = ['pass_index', 'base_index', 'diff_mode', 'ignore_whitespace'].map(name =>
      watch(model, name, () => this._load())
    );
    this._applyFilter();
    this._load();
  }

  dispose(): void {
    this._disposed = true;
    this._unwatch.forEach(unwatch => unwatch());
    this._unwatchWidth();
    this._content?.destroy();
  }

  // -- layout ------------------------------------------------------------------
  private _toolbar(): HTMLElement {
    const bar = h('div', 'tl-toolbar');
    const filter = h('input', 'tl-filter');
    filter.type = 'search';
    filter.placeholder = 'filter pass names';
    filter.addEventListener('input', () => {
      this._filterText = filter.value.trim().toLowerCase();
      this._applyFilter();
    });
    keepKeys(filter);
    const changed = checkbox('changed only', false, on => {
      this._changedOnly = on;
      this._applyFilter();
    });
    changed.classList.add('tl-changed-only');
    bar.append(filter, changed, this._count);
    return bar;
  }

  private _searchBar(): HTMLElement {
    const bar = h('div', 'tl-toolbar tl-irsearch');
    const input = h('input', 'tl-irsearch-input');
    input.type = 'search';
    input.placeholder = 'search the IR of every pass (e.g. tma_copy)';
    keepKeys(input);
    let regexp = false;
    let caseSensitive = false;
    const run = (): void => void this._search(input.value, regexp, caseSensitive);
    input.addEventListener('keydown', event => {
      if (event.key === 'Enter') {
        event.preventDefault();
        run();
      }
    });
    bar.append(
      input,
      button('Find in IR', 'List the passes whose IR first contains, adds or removes a match', run, 'tl-btn tl-irsearch-go'),
      checkbox('regex', false, on => (regexp = on)),
      checkbox('match case', false, on => (caseSensitive = on))
    );
    const wrapper = h('div', 'tl-irsearch-box');
    wrapper.append(bar, this._hits);
    return wrapper;
  }

  private _body(): HTMLElement {
    const body = h('div', 'tl-passes-body');
    this._list = new KeyList(
      this._rows.map(row => ({
        cells: [
          { text: String(row.index), className: 'tl-idx' },
          { text: row.changed ? '●' : '○', className: 'tl-mark' },
          { text: row.name, className: 'tl-name' },
          { text: row.changed ? `+${row.added} −${row.removed}` : '', className: 'tl-delta' },
          { text: `${row.ms.toFixed(row.ms < 10 ? 2 : 1)} ms`, className: 'tl-ms' }
        ],
        title: `#${row.index} ${row.name}\n${row.changed ? `changed the IR: +${row.added} −${row.removed} lines` : 'left the IR unchanged'}\n${row.ms} ms`,
        className: row.changed ? 'tl-changed' : 'tl-unchanged'
      })),
      'Compiler passes',
      position => this._select(this._rows[position].index),
      () => this._content?.focus(),
      position => this._prefetch(this._rows[position].index)
    );
    const listBox = h('div', 'tl-listbox');
    listBox.appendChild(this._list.node);
    const splitter = new Splitter(this.node, '--tl-list-width', '--tl-list-height');
    body.append(listBox, splitter.node, this._detail);
    this._unwatchWidth = watchWidth(this.node, width => {
      this.node.classList.toggle('tl-narrow', width < 760);
      // Side by side asked for: a diff drawn unified for want of room (or split with too little) is drawn again.
      const shown = this.node.dataset.shownMode;
      if (this._model.get('diff_mode') === 'split' && (shown === 'split' || shown === 'unified') && (shown === 'split') !== splitFits(this._detail)) {
        void this._load();
      }
    });
    return body;
  }

  private _applyFilter(): void {
    const shown = this._list.filter(position => {
      const row = this._rows[position];
      return (!this._changedOnly || row.changed) && (!this._filterText || row.name.toLowerCase().includes(this._filterText));
    });
    this._count.textContent = `${shown} of ${this._rows.length} passes`;
  }

  // -- selection and loading ---------------------------------------------------
  private _select(index: number): void {
    this._clickedAt = performance.now();
    performance.mark('tilelab:pass-selected');
    save(this._model, 'pass_index', index);
  }

  private async _load(): Promise<void> {
    const index = this._model.get('pass_index') as number;
    const position = this._position.get(index);
    if (position === undefined) {
      message(this._detail, this._rows.length ? 'Select a pass (click, or j / k in the list).' : 'No passes were recorded.');
      return;
    }
    this._list.mark(position);
    const mode = this._model.get('diff_mode') as string;
    const seq = ++this._seq;
    try {
      if (mode === 'ir') {
        const reply = await this._cached<IIrReply>(`ir|${index}`, 'ir', { index });
        if (seq === this._seq) {
          this._show(this._irPane(reply), reply.index, mode, null, `#${reply.index} ${reply.name}`, 'The whole IR right after this pass.');
        }
        return;
      }
      const asked = performance.now();
      const reply = this._unchangedFromKept(position) ?? (await this._diff(index));
      this.node.dataset.lastReplyMs = (performance.now() - asked).toFixed(1);
      if (seq === this._seq) {
        this._showDiff(reply, mode as 'split' | 'unified');
        // j / k go to the rows beside this one: ask for them now, then for every pass that changed the IR.
        for (const step of [1, -1]) {
          const next = this._list.neighbour(position, step);
          if (next !== undefined) {
            this._prefetch(this._rows[next].index);
          }
        }
        void this._prefetchChanged();
      }
    } catch (error) {
      if (seq === this._seq) {
        message(this._detail, `Could not load pass #${index}: ${(error as Error).message}`, 'error');
      }
    }
  }

  /** Pass `index` diffed with the current base and whitespace setting (a kept reply when there is one). */
  private _diff(index: number): Promise<IDiffReply> {
    const base = this._model.get('base_index') as number;
    const ignore = this._model.get('ignore_whitespace') as boolean;
    return this._cached<IDiffReply>(`diff|${index}|${base}|${ignore}`, 'diff', {
      index,
      base: base < 0 ? null : base,
      ignore_whitespace: ignore
    });
  }

  /**
   * An unchanged pass diffed against the pass before it, from the kept reply of the last pass
   * that changed the IR (same IR): no need to ask the kernel.
   */
  private _unchangedFromKept(position: number): IDiffReply | null {
    const row = this._rows[position];
    const before = this._rows[position - 1];
    if (row.changed || !before || this._model.get('base_index') !== -1) {
      return null;
    }
    const ignore = this._model.get('ignore_whitespace') as boolean;
    for (let k = position - 1; k >= 0; k--) {
      const kept = this._kept.get(`diff|${this._rows[k].index}|-1|${ignore}`) as IDiffReply | undefined;
      if (kept) {
        return { ...kept, index: row.index, name: row.name, changed: false, base: before.index, base_name: before.name, before: kept.after, changes: [], added: 0, removed: 0 };
      }
      if (this._rows[k].changed) {
        return null;
      }
    }
    return null;
  }

  /** Ask, one at a time while the page is idle, for the diff of every pass that changed the IR (nearest first). */
  private async _prefetchChanged(): Promise<void> {
    const setting = `${this._model.get('base_index')}|${this._model.get('ignore_whitespace')}`;
    if (this._prefetching === setting || this._model.get('base_index') !== -1) {
      return; // diffs against a chosen pass are asked for when shown
    }
    this._prefetching = setting;
    const here = this._position.get(this._model.get('pass_index')) ?? 0;
    const order = this._rows
      .map((row, position) => ({ row, position }))
      .filter(({ row }) => row.changed)
      .sort((a, b) => Math.abs(a.position - here) - Math.abs(b.position - here));
    let budget = PREFETCH_CHARS;
    let asked = 0;
    for (const { row } of order) {
      await idle();
      if (this._disposed || this._prefetching !== setting || budget <= 0 || this._model.get('diff_mode') === 'ir') {
        return;
      }
      try {
        const reply = await this._diff(row.index);
        budget -= reply.before.length + reply.after.length;
      } catch {
        return;
      }
      this.node.dataset.askedAhead = String(++asked);
    }
    this.node.dataset.askedAheadDone = setting;
  }

  private _prefetch(index: number): void {
    if (this._model.get('diff_mode') !== 'ir' && index !== this._model.get('base_index')) {
      this._diff(index).catch(() => undefined);
    }
  }

  private _cached<T>(key: string, type: string, content: Record<string, unknown>): Promise<T> {
    let reply = this._cache.get(key);
    if (!reply) {
      reply = this._channel.request<T>(type, content);
      reply.then(
        value => this._kept.set(key, value),
        () => this._cache.delete(key)
      );
      this._cache.set(key, reply);
      if (this._cache.size > 256) {
        const oldest = this._cache.keys().next().value as string;
        this._cache.delete(oldest);
        this._kept.delete(oldest);
      }
    }
    return reply as Promise<T>;
  }

  private _showDiff(reply: IDiffReply, mode: 'split' | 'unified'): void {
    const title = `#${reply.index} ${reply.name}`;
    if (reply.base === null) {
      const pane = this._irPane({ index: reply.index, name: reply.name, text: reply.after });
      this._show(pane, reply.index, mode, null, title, 'The first pass: nothing ran before it, so this is its IR.');
      return;
    }
    const against = `#${reply.base} ${reply.base_name}`;
    const ws = reply.ignore_whitespace ? ' · whitespace ignored' : '';
    if (!reply.changes.length) {
      const pane = this._irPane({ index: reply.index, name: reply.name, text: reply.after });
      const note = reply.before === reply.after ? `Same IR as ${against}.` : `Only whitespace differs from ${against}.`;
      this._show(pane, reply.index, mode, reply.base, title, `${note} The IR after this pass:`);
      return;
    }
    // Side by side needs room for a statement on each side; below that, unified, and the facts say why.
    const { mode: shown, note: narrow } = fittedMode(mode, this._detail);
    const view = new DiffView({
      mode: shown,
      before: reply.before,
      after: reply.after,
      changes: reply.changes,
      language: 'tir',
      titles: [`IR after ${against}`, `IR after ${title}`],
      wrap: this._wrap
    });
    const facts = `+${reply.added} −${reply.removed} lines against ${against}${ws}${narrow}`;
    this._show({ node: view.node, destroy: () => view.destroy(), focus: () => view.views()[view.views().length - 1].focus(), diff: view }, reply.index, shown, reply.base, title, facts);
    this.node.dataset.autoUnified = String(shown !== mode);
  }

  private _irPane(reply: IIrReply): IContent {
    const pane = new CodePane({ title: `IR after #${reply.index} ${reply.name}`, language: 'tir', text: reply.text, wrap: this._wrap });
    return { node: pane.node, destroy: () => pane.destroy(), focus: () => pane.view.focus(), pane };
  }

  private _show(content: IContent, index: number, mode: string, base: number | null, title: string, facts: string): void {
    this._content?.destroy();
    this._content = content;
    const head = h('div', 'tl-detail-head');
    head.append(h('span', 'tl-detail-title', title), h('span', 'tl-facts', facts));
    this._detail.replaceChildren(head, this._controls(index, mode), content.node);
    this.node.dataset.shownPass = String(index);
    this.node.dataset.shownMode = mode;
    this.node.dataset.shownBase = base === null ? '' : String(base);
    this.node.dataset.shownWhitespace = this._model.get('ignore_whitespace') ? 'ignored' : 'shown';
    if (this._clickedAt !== null) {
      const ms = performance.now() - this._clickedAt;
      this.node.dataset.lastShowMs = ms.toFixed(1);
      performance.measure('tilelab:pass-shown', 'tilelab:pass-selected');
      this._clickedAt = null;
    }
    if (this._pendingSearch && this._pendingSearch.index === index) {
      const { query, side, line, regexp, caseSensitive } = this._pendingSearch;
      this._pendingSearch = null;
      if (content.diff) {
        content.diff.search(query, side, line, { regexp, caseSensitive });
      } else if (content.pane) {
        showMatches(content.pane.view, new SearchQuery({ search: query, regexp, caseSensitive }), side === 'b' ? line : null);
      }
    }
  }

  /** The detail's controls, built once and brought up to date for each pass shown. */
  private _controls(index: number, mode: string): HTMLElement {
    if (!this._bar) {
      this._bar = this._buildControls();
    }
    const { bar, against, first, modes, ignore } = this._bar;
    const position = this._position.get(index)!;
    const before = this._rows[position - 1];
    first.textContent = before ? `vs the pass before (#${before.index} ${before.name})` : 'vs nothing (first pass)';
    for (const option of Array.from(against.options)) {
      option.hidden = option.value === String(index);
    }
    against.value = String(this._model.get('base_index'));
    against.disabled = mode === 'ir';
    for (const b of modes) {
      const on = b.dataset.mode === this._model.get('diff_mode'); // the choice, even when shown unified for want of room
      b.classList.toggle('tl-on', on);
      b.setAttribute('aria-pressed', on ? 'true' : 'false');
    }
    ignore.checked = this._model.get('ignore_whitespace');
    return bar;
  }

  private _buildControls(): IControls {
    const bar = h('div', 'tl-toolbar tl-detail-controls');
    const against = h('select', 'tl-base');
    against.title = 'Diff this pass against the pass before it, or against any pass';
    const first = h('option', '', '');
    first.value = '-1';
    against.appendChild(first);
    for (const row of this._rows) {
      const option = h('option', '', `vs #${row.index} ${row.name}`);
      option.value = String(row.index);
      against.appendChild(option);
    }
    against.addEventListener('change', () => save(this._model, 'base_index', Number(against.value)));
    const group = h('div', 'tl-segmented');
    group.setAttribute('role', 'group');
    const modes = MODES.map(([value, label, title]) => {
      const b = button(label, title, () => save(this._model, 'diff_mode', value));
      b.dataset.mode = value;
      group.appendChild(b);
      return b;
    });
    const ignoreLabel = checkbox('ignore whitespace', true, on => save(this._model, 'ignore_whitespace', on));
    ignoreLabel.classList.add('tl-ignore-ws');
    ignoreLabel.title = 'Re-indented lines do not count as changed';
    const wrap = checkbox('wrap lines', this._wrap, on => {
      this._wrap = on;
      this._content?.diff?.setWrap(on);
      this._content?.pane?.setWrap(on);
    });
    bar.append(against, group, ignoreLabel, wrap);
    return { bar, against, first, modes, ignore: ignoreLabel.querySelector('input')! };
  }

  // -- search over every pass's IR ------------------------------------------------
  private async _search(query: string, regexp: boolean, caseSensitive: boolean): Promise<void> {
    if (!query.trim()) {
      message(this._hits, 'Type a name to look for, e.g. tma_copy or T.gemm.');
      return;
    }
    message(this._hits, 'searching…');
    let reply: ISearchReply;
    try {
      reply = await this._channel.request<ISearchReply>('search', { query, regex: regexp, case: caseSensitive });
    } catch (error) {
      message(this._hits, (error as Error).message, 'error');
      return;
    }
    this._markHits(reply.hits);
    if (!reply.hits.length) {
      message(this._hits, `No pass's IR contains “${query}”.`);
      return;
    }
    const list = h('div', 'tl-hits');
    list.setAttribute('role', 'list');
    for (const hit of reply.hits) {
      const row = button('', `Show #${hit.index} ${hit.name} with the matches of “${query}”`, () => this._jump(hit, query, regexp, caseSensitive), 'tl-hit');
      row.dataset.passIndex = String(hit.index);
      row.dataset.kind = hit.kind;
      row.append(
        h('span', `tl-hit-kind tl-hit-${hit.kind}`, HIT_WORDS[hit.kind]),
        h('span', 'tl-hit-name', `#${hit.index} ${hit.name}`),
        h('span', 'tl-hit-count', `${hit.before} → ${hit.after} matches`)
      );
      list.appendChild(row);
    }
    const summary = h('div', 'tl-hint', `“${query}”: ${reply.hits.length} passes change its count; ${reply.final} in the final IR.`);
    this._hits.replaceChildren(summary, list);
  }

  private _markHits(hits: IHit[]): void {
    const kinds = new Map(hits.map(hit => [hit.index, hit.kind]));
    this._rows.forEach((row, position) => {
      const node = this._list.row(position)!;
      node.classList.remove('tl-hit-first', 'tl-hit-adds', 'tl-hit-removes');
      const kind = kinds.get(row.index);
      if (kind) {
        node.classList.add(`tl-hit-${kind}`);
      }
    });
  }

  private _jump(hit: IHit, query: string, regexp: boolean, caseSensitive: boolean): void {
    this._pendingSearch = { index: hit.index, query, side: hit.side, line: hit.line, regexp, caseSensitive };
    if (this._model.get('diff_mode') !== 'split' && hit.side === 'a') {
      this._model.set('diff_mode', 'split'); // a removal shows only on the left of a split diff
    }
    this._model.set('base_index', -1);
    if (this._model.get('pass_index') === hit.index) {
      this._model.save_changes();
      void this._load();
    } else {
      this._select(hit.index);
    }
  }

  private _model: IModel;
  private _channel: Channel;
  private _rows: IPassRow[];
  private _position = new Map<number, number>();
  private _list!: KeyList;
  private _detail = h('div', 'tl-detail');
  private _count = h('span', 'tl-count');
  private _hits = h('div', 'tl-hits-box');
  private _filterText = '';
  private _changedOnly = false;
  private _wrap = true;
  private _seq = 0;
  private _cache = new Map<string, Promise<unknown>>();
  private _kept = new Map<string, unknown>(); // the replies of _cache that have arrived
  private _prefetching = '';
  private _disposed = false;
  private _content: IContent | null = null;
  private _pendingSearch: (IPendingSearch & { index: number }) | null = null;
  private _clickedAt: number | null = null;
  private _unwatch: (() => void)[];
  private _unwatchWidth: () => void = () => undefined;
  private _bar: IControls | null = null;
}

interface IControls {
  bar: HTMLElement;
  against: HTMLSelectElement;
  first: HTMLOptionElement;
  modes: HTMLButtonElement[];
  ignore: HTMLInputElement;
}

interface IContent {
  node: HTMLElement;
  destroy: () => void;
  focus: () => void;
  diff?: DiffView;
  pane?: CodePane;
}
