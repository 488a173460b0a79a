/**
 * The Passes tab: the pass list (keyboard-driven, resizable, changed/unchanged
 * marks), the selected pass diffed against the pass before it or any chosen
 * pass (side by side or unified, whitespace ignored or not), the IR after any
 * pass, and a search over every pass's IR that lists where a match first
 * appears, grows or shrinks. Texts come from the kernel on request
 * (`pass_texts.ts`); the controls are `pass_controls.ts`, the search
 * `pass_search.ts`.
 */

import { Channel } from './channel';
import { CodePane } from './codepane';
import { DiffView, fittedMode, splitFits } from './diffview';
import { checkbox, h, keepKeys, message, watchWidth } from './dom';
import { IModel, save, watch } from './model';
import { DiffControls } from './pass_controls';
import { IHit, IPendingSearch, IrSearch, showPendingSearch } from './pass_search';
import { IDiffReply, IIrReply, IPassRow, IPassesData, PREFETCH_CHARS, PassTexts, idle } from './pass_texts';
import { KeyList } from './passlist';
import { Splitter } from './splitter';

export class PassesTab {
  readonly node: HTMLDivElement;

  constructor(model: IModel, channel: Channel) {
    this._model = model;
    this._texts = new PassTexts(channel);
    this._search = new IrSearch(
      channel,
      hits => this._markHits(hits),
      (hit, query, regexp, caseSensitive) => this._jump(hit, query, regexp, caseSensitive)
    );
    this._rows = (model.get('passes') as IPassesData).rows;
    this._rows.forEach((row, position) => this._position.set(row.index, position));
    this.node = h('div', 'tl-passes');
    this.node.append(this._toolbar(), this._search.node, this._body());
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

  private _body(): HTMLElement {
    const body = h('div', 'tl-passes-body');
    this._list = new KeyList(
      this._rows.map(row => ({
        cells: [
          { text: String(row.index), className: 'tl-idx' },
          { text: row.changed ? '●' : '○', className: 'tl-mark' },
          { text: row.name, className: 'tl-name' },
          { text: row.delta, className: 'tl-delta' },
          { text: `${row.ms.toFixed(row.ms < 10 ? 2 : 1)} ms`, className: 'tl-ms' }
        ],
        title: `#${row.index} ${row.name}\n${row.changed ? `changed the IR: ${row.delta} lines` : 'left the IR unchanged'}\n${row.time}`,
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
      const wasNarrow = this.node.classList.contains('tl-narrow');
      if (this.node.classList.toggle('tl-narrow', width < 760) !== wasNarrow) {
        this._list.reveal();
      }
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
        const reply = await this._texts.cached<IIrReply>(`ir|${index}`, 'ir', { index });
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
    return this._texts.diff(index, this._model.get('base_index') as number, this._model.get('ignore_whitespace') as boolean);
  }

  /** An unchanged pass diffed against the pass before it, from a kept reply (see `PassTexts`). */
  private _unchangedFromKept(position: number): IDiffReply | null {
    if (this._rows[position].changed || !this._rows[position - 1] || this._model.get('base_index') !== -1) {
      return null;
    }
    return this._texts.unchangedFromKept(this._rows, position, this._model.get('ignore_whitespace') as boolean);
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
      const pending = this._pendingSearch;
      this._pendingSearch = null;
      showPendingSearch(content, pending);
    }
  }

  /** The detail's controls, built once and brought up to date for each pass shown. */
  private _controls(index: number, mode: string): HTMLElement {
    if (!this._bar) {
      this._bar = new DiffControls(this._model, this._rows, this._wrap, on => {
        this._wrap = on;
        this._content?.diff?.setWrap(on);
        this._content?.pane?.setWrap(on);
      });
    }
    return this._bar.update(index, this._position.get(index)!, mode);
  }

  // -- search over every pass's IR ------------------------------------------------
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
  private _texts: PassTexts;
  private _search: IrSearch;
  private _rows: IPassRow[];
  private _position = new Map<number, number>();
  private _list!: KeyList;
  private _detail = h('div', 'tl-detail');
  private _count = h('span', 'tl-count');
  private _filterText = '';
  private _changedOnly = false;
  private _wrap = true;
  private _seq = 0;
  private _prefetching = '';
  private _disposed = false;
  private _content: IContent | null = null;
  private _pendingSearch: IPendingSearch | null = null;
  private _clickedAt: number | null = null;
  private _unwatch: (() => void)[];
  private _unwatchWidth: () => void = () => undefined;
  private _bar: DiffControls | null = null;
}

interface IContent {
  node: HTMLElement;
  destroy: () => void;
  focus: () => void;
  diff?: DiffView;
  pane?: CodePane;
}
