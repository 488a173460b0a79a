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
import { BUTTON, labelled, picker, segmented } from './layouts_controls';
import { IEntry, WarpLegend, renderFacts } from './layouts_facts';
import { ColourMode, IGridData, IGridView, LABEL_LEVEL, LEVELS, LabelMode } from './layouts_geometry';
import { GridCanvas, IHover } from './layouts_grid';
import { IReply, readTile, tileKey } from './layouts_tiles';
import { IModel, save } from './model';

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
    this._legend = new WarpLegend(() => this._redraw());
    this._status = h('div', 'tl-lay-status');
    this._tip = h('div', 'tl-lay-tip');
    this._description = h('details', 'tl-lay-description');
    this.root.append(this._bar, this._facts, this._legend.node, this._status);
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
    return { level: this._level, colour: this._colour, label: this._label, warp: this._legend.warp };
  }

  private _cacheKey(): string {
    return tileKey(this._name, this._replica, this._tile);
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
    this._legend.warp = null;
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
      this._bar.append(labelled('replica', picker('tl-lay-replica', entry.replicas, this._replica, value => {
        this._replica = value;
        this._switchStart = performance.now();
        this._fetch();
      })));
    }
    if (entry.tiles > 1) {
      this._bar.append(labelled('tile', picker('tl-lay-tile', entry.tiles, this._tile, value => {
        this._tile = value;
        this._switchStart = performance.now();
        this._fetch();
      })));
    }
    if (entry.kind === 'fragment') {
      this._bar.append(segmented('colour', COLOUR_MODES, this._colour, mode => {
        this._colour = mode as ColourMode;
        this._redraw();
      }));
    } else if (entry.kind === 'shared') {
      this._bar.append(segmented('label', LABEL_MODES, this._label, mode => {
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

  private _renderFacts(entry: IEntry): void {
    renderFacts(this._facts, this._description, entry);
    this._legend.render(entry, this._colours);
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
      this._legend.render(entry, this._colours);
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
        if (this._legend.warp !== null && this._entry !== undefined) {
          this._legend.warp = null;
          this._legend.render(this._entry, this._colours);
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
    const data = readTile(message, buffers, this._entries);
    if (data === null) {
      return;
    }
    const key = tileKey(message.name, data.replica, data.tile);
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
  private _legend: WarpLegend;
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
  private _level = LABEL_LEVEL;
  private _fitNext = true;
  private _shown: string | null = null;
  private _width = 0;
  private _requests = 0;
  private _pending = -1;
  private _switchStart = 0;
}

/** anywidget's entry point. */
function render({ model, el }: { model: IModel; el: HTMLElement }): () => void {
  const view = new LayoutsView(model, el);
  return () => view.dispose();
}

export default { render };
