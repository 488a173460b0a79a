/**
 * The Layouts tab (anywidget front-end of `tilelab.views.layout_view.LayoutsWidget`).
 *
 * Synced state is small: the layouts' facts (`layouts`), the palette and the
 * selected buffer. A tile's tables travel on request: the view sends
 * `{type: "grid", name, replica, tile, seq}` and the kernel answers with the
 * same `seq`, the tile's shape and two int32 buffers (see `grid_payload`).
 * Tiles already fetched are kept, so switching back is immediate.
 */

import { button, h, keepKeys, watchWidth } from './dom';
import { Colours, IPalette, readTheme } from './layouts_colours';
import { ColourMode, IGridData, IGridView, LABEL_LEVEL, LEVELS, LabelMode } from './layouts_geometry';
import { GridCanvas, IHover } from './layouts_grid';
import { IModel, save } from './model';

/** One layout's facts, as `tilelab.views.layout.layout_entries` sends them. */
interface IEntry {
  name: string;
  kind: 'fragment' | 'shared' | 'other';
  shape: number[];
  dtype: string;
  rows: number;
  cols: number;
  tiles: number;
  replicas: number;
  threads: [number, number] | null;
  table: boolean;
  summary: string;
  description: string;
}

/** The kernel's answer to a `grid` request (`LayoutsWidget.reply`), its tables in two buffers. */
interface IReply {
  id?: number;
  type?: string;
  error?: string;
  name?: string;
  kind?: 'fragment' | 'shared';
  rows?: number;
  cols?: number;
  replica?: number;
  tile?: number;
}

const BUTTON = 'tl-lay-button';
const COLOUR_MODES: ColourMode[] = ['warp', 'thread', 'local'];
const LABEL_MODES: LabelMode[] = ['offset', 'bank'];

class LayoutsView {
  constructor(model: IModel, el: HTMLElement) {
    this._model = model;
    this._el = el;
    this.root = h('div', 'tl-lay');
    keepKeys(this.root); // our keys must not move the notebook
    this._bar = h('div', 'tl-lay-bar');
    this._facts = h('div', 'tl-lay-facts');
    this._legend = h('div', 'tl-lay-legend');
    this._status = h('div', 'tl-lay-status');
    this._tip = h('div', 'tl-lay-tip');
    this._description = h('details', 'tl-lay-description');
    this.root.append(this._bar, this._facts, this._legend, this._status);
    this._grid = new GridCanvas(
      this.root,
      hover => this._showTip(hover),
      level => this._onZoom(level)
    );
    this._grid.node.append(this._tip);
    this.root.append(this._description);
    el.append(this.root);
    this._colours = new Colours(this._palette(), readTheme(el));
    this._grid.focusTarget.addEventListener('keydown', event => this._keyEvent(event));
    this._onMessage = (message: IReply, buffers: DataView[]) => this._receive(message, buffers);
    this._onLayouts = () => this._renderAll();
    this._onSelected = () => this._select(String(model.get('selected') ?? ''), false);
    model.on('msg:custom', this._onMessage);
    model.on('change:layouts', this._onLayouts);
    model.on('change:selected', this._onSelected);
    this._themeWatch = new MutationObserver(() => this._retheme());
    this._themeWatch.observe(document.body, { attributes: true, attributeFilter: ['data-jp-theme-light', 'data-jp-theme-name'] });
    this._unwatchWidth = watchWidth(this.root, () => this._resized());
    this._renderAll();
  }

  readonly root: HTMLDivElement;

  dispose(): void {
    this._model.off('msg:custom', this._onMessage);
    this._model.off('change:layouts', this._onLayouts);
    this._model.off('change:selected', this._onSelected);
    this._themeWatch.disconnect();
    this._unwatchWidth();
    this._grid.dispose();
    this.root.remove();
  }

  // -- state -------------------------------------------------------------------------
  private get _entries(): IEntry[] {
    return (this._model.get('layouts') as IEntry[] | undefined) ?? [];
  }

  private get _entry(): IEntry | undefined {
    return this._entries.find(entry => entry.name === this._name);
  }

  private _palette(): IPalette {
    return (this._model.get('palette') as IPalette | undefined) ?? { hues: [212, 28, 134, 352], shades: 4 };
  }

  private _view(): IGridView {
    return { level: this._level, colour: this._colour, label: this._label, warp: this._warp };
  }

  private _cacheKey(): string {
    return `${this._name}/${this._replica}/${this._tile}`;
  }

  // -- rendering ---------------------------------------------------------------------
  private _renderAll(): void {
    const entries = this._entries;
    const wanted = String(this._model.get('selected') ?? '');
    const first = entries.find(entry => entry.kind === 'fragment') ?? entries[0];
    this._name = entries.some(entry => entry.name === wanted) ? wanted : (first?.name ?? '');
    this._cache.clear();
    this._renderBar();
    this._select(this._name, false, true);
  }

  /** Show buffer `name` (fetching its first tile when needed). */
  private _select(name: string, fromUser: boolean, force = false): void {
    if (!force && name === this._name && this._shown !== null) {
      return;
    }
    const entry = this._entries.find(candidate => candidate.name === name);
    if (entry === undefined) {
      this._facts.textContent = this._entries.length === 0 ? 'No layouts in this record.' : '';
      return;
    }
    this._switchStart = performance.now();
    this._name = name;
    this._replica = 0;
    this._tile = 0;
    this._warp = null;
    this._fitNext = true;
    if (fromUser) {
      save(this._model, 'selected', name);
    }
    this._renderBar();
    this._renderFacts(entry);
    this._fetch();
  }

  private _renderBar(): void {
    const entry = this._entry;
    this._bar.replaceChildren();
    const buffers = h('select', 'tl-lay-buffer');
    buffers.setAttribute('aria-label', 'buffer');
    for (const candidate of this._entries) {
      const option = h('option', '', `${candidate.name} · ${candidate.kind} ${candidate.shape.join('×')} ${candidate.dtype}`);
      option.value = candidate.name;
      buffers.append(option);
    }
    buffers.value = this._name;
    buffers.addEventListener('change', () => this._select(buffers.value, true));
    this._bar.append(labelled('buffer', buffers));
    if (entry === undefined) {
      return;
    }
    if (entry.replicas > 1) {
      this._bar.append(labelled('replica', this._picker('tl-lay-replica', entry.replicas, this._replica, value => {
        this._replica = value;
        this._switchStart = performance.now();
        this._fetch();
      })));
    }
    if (entry.tiles > 1) {
      this._bar.append(labelled('tile', this._picker('tl-lay-tile', entry.tiles, this._tile, value => {
        this._tile = value;
        this._switchStart = performance.now();
        this._fetch();
      })));
    }
    if (entry.kind === 'fragment') {
      this._bar.append(this._segmented('colour', COLOUR_MODES, this._colour, mode => {
        this._colour = mode as ColourMode;
        this._redraw();
      }));
    } else if (entry.kind === 'shared') {
      this._bar.append(this._segmented('label', LABEL_MODES, this._label, mode => {
        this._label = mode as LabelMode;
        this._redraw();
      }));
    }
    const zoom = h('span', 'tl-lay-zoom');
    const out = button('−', 'zoom out (-)', () => this._grid.zoom(this._level - 1), BUTTON);
    const into = button('+', 'zoom in (+)', () => this._grid.zoom(this._level + 1), BUTTON);
    const fit = button('fit', 'fit the tile (0)', () => this._fit(), BUTTON);
    this._zoomLabel = h('span', 'tl-lay-zoomlabel');
    zoom.append(h('span', 'tl-lay-label', 'zoom'), out, this._zoomLabel, into, fit);
    this._bar.append(zoom);
    this._onZoom(this._level);
  }

  private _picker(className: string, count: number, value: number, change: (value: number) => void): HTMLElement {
    const select = h('select', className);
    for (let index = 0; index < count; index++) {
      const option = h('option', '', String(index));
      option.value = String(index);
      select.append(option);
    }
    select.value = String(value);
    select.addEventListener('change', () => change(Number(select.value)));
    return select;
  }

  private _segmented(title: string, modes: string[], current: string, change: (mode: string) => void): HTMLElement {
    const group = h('span', 'tl-lay-segmented');
    group.setAttribute('role', 'radiogroup');
    group.setAttribute('aria-label', title);
    group.append(h('span', 'tl-lay-label', title));
    for (const mode of modes) {
      const choice = button(
        mode,
        `${title}: ${mode}`,
        () => {
          for (const other of group.querySelectorAll('button')) {
            other.classList.toggle('tl-mod-active', other === choice);
            other.setAttribute('aria-checked', String(other === choice));
          }
          change(mode);
        },
        BUTTON
      );
      choice.setAttribute('role', 'radio');
      choice.classList.toggle('tl-mod-active', mode === current);
      choice.setAttribute('aria-checked', String(mode === current));
      group.append(choice);
    }
    return group;
  }

  private _renderFacts(entry: IEntry): void {
    const shape = entry.shape.join('×');
    this._facts.replaceChildren(
      h('b', '', entry.name),
      document.createTextNode(` · ${entry.kind} ${shape} ${entry.dtype} · ${entry.summary}`)
    );
    if (entry.threads !== null && entry.threads[0] !== 0) {
      this._facts.append(
        h('span', 'tl-lay-range', ` · thread_range [${entry.threads[0]}, ${entry.threads[1]}): ids are threadIdx.x`)
      );
    }
    this._description.replaceChildren(
      h('summary', '', 'TileLang layout'),
      h('pre', 'tl-lay-pre', entry.description)
    );
    this._renderLegend(entry);
  }

  /** Warp chips (fragments): a click keeps only that warp's colours (by lane) and greys the rest. */
  private _renderLegend(entry: IEntry): void {
    this._legend.replaceChildren();
    if (entry.kind !== 'fragment' || entry.threads === null) {
      return;
    }
    const [start, end] = entry.threads;
    const chips: HTMLButtonElement[] = [];
    const choose = (warp: number | null) => {
      this._warp = this._warp === warp ? null : warp;
      for (const chip of chips) {
        const value = chip.dataset.warp === 'all' ? null : Number(chip.dataset.warp);
        chip.classList.toggle('tl-mod-active', value === this._warp);
      }
      this._redraw();
    };
    const all = button('all warps', 'colour every warp', () => choose(null), BUTTON);
    all.dataset.warp = 'all';
    all.classList.toggle('tl-mod-active', this._warp === null);
    chips.push(all);
    for (let warp = Math.floor(start / 32); warp <= Math.floor((end - 1) / 32); warp++) {
      const first = Math.max(start, warp * 32);
      const last = Math.min(end, (warp + 1) * 32) - 1;
      const chip = button('', `only warp ${warp}: threads ${first}–${last} coloured by lane`, () => choose(warp), BUTTON);
      chip.dataset.warp = String(warp);
      const swatch = h('span', 'tl-lay-swatch');
      swatch.style.background = this._colours.warp(warp, 0).fill;
      chip.append(swatch, document.createTextNode(`warp ${warp} · T${first}–${last}`));
      chips.push(chip);
    }
    this._legend.append(...chips);
  }

  private _redraw(): void {
    // Hidden (another tab): drawing now would size the canvas 0×0; _resized draws it when it shows again.
    if (this._shown !== null && this.root.clientWidth > 0) {
      this._grid.update(this._view(), this._colours);
    }
  }

  private _retheme(): void {
    this._colours = new Colours(this._palette(), readTheme(this._el));
    const entry = this._entry;
    if (entry !== undefined) {
      this._renderLegend(entry);
    }
    this._redraw();
  }

  private _resized(): void {
    const width = this.root.clientWidth;
    if (width === this._width) {
      return;
    }
    this._width = width; // 0 while hidden: showing it again is a change, and redraws
    if (width === 0) {
      return;
    }
    if (this._shown === null) {
      this._fetch(); // the tab became visible: now the tile is worth fetching
    } else {
      this._grid.update(this._view(), this._colours); // the theme may have changed while it was hidden
      this._grid.resize();
    }
  }

  private _fit(): void {
    const data = this._cache.get(this._cacheKey());
    if (data !== undefined) {
      this._grid.zoom(this._grid.fitLevel(data));
    }
  }

  private _onZoom(level: number): void {
    this._level = level;
    if (this._zoomLabel !== null) {
      const of = `${level + 1}/${LEVELS.length}`;
      this._zoomLabel.textContent = level >= LABEL_LEVEL - 1 ? `${of} labels` : `${of} · ${this._grid.cellWidth(level)} px`;
    }
    this.root.dataset.level = String(level);
  }

  private _showTip(hover: IHover | null): void {
    if (hover === null) {
      this._tip.style.display = 'none';
      return;
    }
    this._tip.textContent = hover.text;
    this._tip.style.display = 'block';
    const box = this._grid.node.getBoundingClientRect();
    const tipWidth = this._tip.offsetWidth;
    const left = hover.x + 14 + tipWidth > box.width ? Math.max(0, hover.x - tipWidth - 10) : hover.x + 14;
    this._tip.style.left = `${left}px`;
    this._tip.style.top = `${hover.y + 18}px`;
  }

  private _handleKey(event: KeyboardEvent): boolean {
    switch (event.key) {
      case '+':
      case '=':
        this._grid.zoom(this._level + 1);
        return true;
      case '-':
      case '_':
        this._grid.zoom(this._level - 1);
        return true;
      case '0':
        this._fit();
        return true;
      case 'Escape':
        if (this._warp !== null && this._entry !== undefined) {
          this._warp = null;
          this._renderLegend(this._entry);
          this._redraw();
          return true;
        }
        return false;
      default:
        return false;
    }
  }

  private _keyEvent(event: KeyboardEvent): void {
    if (this._handleKey(event)) {
      event.preventDefault();
      event.stopPropagation();
    }
  }

  // -- data --------------------------------------------------------------------------
  private _fetch(): void {
    const entry = this._entry;
    if (entry === undefined || this.root.clientWidth === 0) {
      return; // hidden (another tab): fetched when it becomes visible
    }
    if (!entry.table) {
      this._shown = null;
      this._status.textContent = 'No element table for this layout (the buffer is too large to tabulate).';
      this._grid.node.style.display = 'none';
      return;
    }
    this._grid.node.style.display = '';
    const key = this._cacheKey();
    const cached = this._cache.get(key);
    if (cached !== undefined) {
      this._draw(key, cached);
      return;
    }
    const id = ++this._requests;
    this._pending = id;
    this._status.textContent = 'loading…';
    this._model.send({ id, type: 'grid', name: this._name, replica: this._replica, tile: this._tile });
  }

  private _receive(message: IReply, buffers: DataView[]): void {
    if (message.id !== this._pending) {
      return; // an answer to a request the user has moved on from
    }
    if (message.error !== undefined) {
      this._status.textContent = message.error;
      return;
    }
    if (message.type !== 'grid' || buffers.length < 2 || message.rows === undefined || message.cols === undefined) {
      return;
    }
    const entry = this._entries.find(candidate => candidate.name === message.name);
    const data: IGridData = {
      kind: message.kind ?? 'fragment',
      rows: message.rows,
      cols: message.cols,
      replica: message.replica ?? 0,
      tile: message.tile ?? 0,
      a: int32(buffers[0]),
      b: int32(buffers[1]),
      start: entry?.threads?.[0] ?? 0
    };
    const key = `${message.name}/${data.replica}/${data.tile}`;
    this._cache.set(key, data);
    if (key === this._cacheKey()) {
      this._draw(key, data);
    }
  }

  private _draw(key: string, data: IGridData): void {
    this._status.textContent = '';
    const level = this._grid.show(data, this._view(), this._colours, this._fitNext);
    this._fitNext = false;
    this._onZoom(level);
    this._shown = key;
    this.root.dataset.shown = key;
    this.root.dataset.switchMs = (performance.now() - this._switchStart).toFixed(1);
  }

  private _model: IModel;
  private _el: HTMLElement;
  private _bar: HTMLElement;
  private _facts: HTMLElement;
  private _legend: HTMLElement;
  private _status: HTMLElement;
  private _tip: HTMLElement;
  private _description: HTMLElement;
  private _zoomLabel: HTMLElement | null = null;
  private _grid: GridCanvas;
  private _colours: Colours;
  private _themeWatch: MutationObserver;
  private _unwatchWidth: () => void;
  private _onMessage: (message: IReply, buffers: DataView[]) => void;
  private _onLayouts: () => void;
  private _onSelected: () => void;
  private _cache = new Map<string, IGridData>();
  private _name = '';
  private _replica = 0;
  private _tile = 0;
  private _colour: ColourMode = 'warp';
  private _label: LabelMode = 'offset';
  private _warp: number | null = null;
  private _level = LABEL_LEVEL;
  private _fitNext = true;
  private _shown: string | null = null;
  private _width = 0;
  private _requests = 0;
  private _pending = -1;
  private _switchStart = 0;
}

function labelled(text: string, control: HTMLElement): HTMLElement {
  const label = h('label', 'tl-lay-field');
  label.append(h('span', 'tl-lay-label', text), control);
  return label;
}

/** A little-endian int32 view of a message buffer (copied: the buffer's offset may not be 4-aligned). */
function int32(view: DataView): Int32Array {
  return new Int32Array(view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength));
}

/** anywidget's entry point. */
function render({ model, el }: { model: IModel; el: HTMLElement }): () => void {
  const view = new LayoutsView(model, el);
  return () => view.dispose();
}

export default { render };
