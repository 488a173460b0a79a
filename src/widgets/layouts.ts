/**
 * The Explorer's Layouts tab: every layout of the record on a canvas grid.
 *
 * When the tab is first shown it asks the kernel for its data (`layouts`:
 * `tilelab.views.layouts.data.layouts_data`, the dict the snapshot renders
 * too): each layout's facts and first tile, the palette and the wrapping rule.
 * Any other tile (replica, leading index) travels on request (`layout_tile`);
 * tiles already fetched are kept, so switching back is immediate. The buffer
 * shown is the synced trait `layout_buffer` ("" picks the first fragment).
 */

import { Channel } from './channel';
import { button, h, keepKeys, watchWidth } from './dom';
import { Colours, readTheme } from './layouts_colours';
import { BUTTON, labelled, picker, segmented } from './layouts_controls';
import { IEntry, ILayoutsData, WarpLegend, renderFacts } from './layouts_facts';
import { ColourMode, IGridData, IGridView, LABEL_LEVEL, LEVELS, LabelMode } from './layouts_geometry';
import { GridCanvas, IHover } from './layouts_grid';
import { ITileReply, readTile, tileKey } from './layouts_tiles';
import { IModel, save, watch } from './model';

const COLOUR_MODES: ColourMode[] = ['warp', 'thread', 'local'];
const LABEL_MODES: LabelMode[] = ['offset', 'bank'];

export class LayoutsTab {
  constructor(model: IModel, channel: Channel) {
    this._model = model;
    this._channel = channel;
    this.root = h('div', 'tl-lay');
    this.node = this.root;
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
    this._grid.focusTarget.addEventListener('keydown', event => this._keyEvent(event));
    this._unwatchSelected = watch(model, 'layout_buffer', () => this._select(String(model.get('layout_buffer') ?? ''), false));
    this._themeWatch = new MutationObserver(() => this._retheme());
    this._themeWatch.observe(document.body, { attributes: true, attributeFilter: ['data-jp-theme-light', 'data-jp-theme-name'] });
    this._unwatchWidth = watchWidth(this.root, () => this._resized());
    this._status.textContent = 'loading…';
    channel
      .request<ILayoutsData>('layouts')
      .then(data => this._receiveData(data))
      .catch(error => (this._status.textContent = (error as Error).message));
  }

  /** The tab's panel (the shell shows and hides it). */
  readonly node: HTMLDivElement;
  readonly root: HTMLDivElement;

  dispose(): void {
    this._disposed = true;
    this._unwatchSelected();
    this._themeWatch.disconnect();
    this._unwatchWidth();
    this._grid.dispose();
    this.root.remove();
  }

  // -- state -------------------------------------------------------------------------
  private get _entries(): IEntry[] {
    return this._data?.layouts ?? [];
  }

  private get _entry(): IEntry | undefined {
    return this._entries.find(entry => entry.name === this._name);
  }

  private _view(): IGridView {
    return { level: this._level, colour: this._colour, label: this._label, warp: this._legend.warp };
  }

  private _cacheKey(): string {
    return tileKey(this._name, this._replica, this._tile);
  }

  // -- rendering ---------------------------------------------------------------------
  /** The tab's data arrived: keep every first tile, pick the buffer and show it. */
  private _receiveData(data: ILayoutsData): void {
    if (this._disposed) {
      return;
    }
    this._data = data;
    this._colours = new Colours(data.palette, readTheme(this.root));
    this._status.textContent = '';
    for (const entry of data.layouts) {
      const tile = entry.tile === null ? null : readTile(entry, entry.tile, data.wrap);
      if (tile !== null) {
        this._cache.set(tileKey(entry.name, 0, 0), tile);
      }
    }
    const entries = this._entries;
    const wanted = String(this._model.get('layout_buffer') ?? '');
    const first = entries.find(entry => entry.kind === 'fragment') ?? entries[0];
    this._name = entries.some(entry => entry.name === wanted) ? wanted : (first?.name ?? '');
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
      this._facts.textContent = this._data !== null && this._entries.length === 0 ? 'No layouts in this record.' : '';
      return;
    }
    this._switchStart = performance.now();
    this._name = name;
    this._replica = 0;
    this._tile = 0;
    this._legend.warp = null;
    this._fitNext = true;
    if (fromUser) {
      save(this._model, 'layout_buffer', name);
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
    if (this._colours !== null) {
      this._legend.render(entry, this._colours);
    }
  }

  private _redraw(): void {
    // Hidden (another tab): drawing now would size the canvas 0×0; _resized draws it when it shows again.
    if (this._shown !== null && this._colours !== null && this.root.clientWidth > 0) {
      this._grid.update(this._view(), this._colours);
    }
  }

  private _retheme(): void {
    if (this._data === null) {
      return;
    }
    this._colours = new Colours(this._data.palette, readTheme(this.root));
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
      this._fetch(); // the tab became visible: now the tile is worth drawing
    } else if (this._colours !== null) {
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
        if (this._legend.warp !== null && this._entry !== undefined && this._colours !== null) {
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
      return; // hidden (another tab): drawn or fetched when it becomes visible
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
    const ticket = ++this._requests;
    this._status.textContent = 'loading…';
    this._channel
      .request<ITileReply>('layout_tile', { name: this._name, replica: this._replica, tile: this._tile })
      .then(reply => this._receive(reply))
      .catch(error => {
        if (ticket === this._requests && !this._disposed) {
          this._status.textContent = (error as Error).message;
        }
      });
  }

  private _receive(reply: ITileReply): void {
    const entry = this._entries.find(candidate => candidate.name === reply.name);
    const data = entry === undefined || this._data === null ? null : readTile(entry, reply, this._data.wrap);
    if (data === null || this._disposed) {
      return;
    }
    const key = tileKey(reply.name, data.replica, data.tile);
    this._cache.set(key, data);
    if (key === this._cacheKey()) {
      this._draw(key, data); // else an answer to a request the user has moved on from
    }
  }

  private _draw(key: string, data: IGridData): void {
    if (this._colours === null) {
      return;
    }
    this._status.textContent = '';
    const level = this._grid.show(data, this._view(), this._colours, this._fitNext);
    this._fitNext = false;
    this._onZoom(level);
    this._shown = key;
    this.root.dataset.shown = key;
    this.root.dataset.switchMs = (performance.now() - this._switchStart).toFixed(1);
  }

  private _model: IModel;
  private _channel: Channel;
  private _data: ILayoutsData | null = null;
  private _disposed = false;
  private _bar: HTMLElement;
  private _facts: HTMLElement;
  private _legend: WarpLegend;
  private _status: HTMLElement;
  private _tip: HTMLElement;
  private _description: HTMLElement;
  private _zoomLabel: HTMLElement | null = null;
  private _grid: GridCanvas;
  private _colours: Colours | null = null;
  private _themeWatch: MutationObserver;
  private _unwatchWidth: () => void;
  private _unwatchSelected: () => void;
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
  private _switchStart = 0;
}
