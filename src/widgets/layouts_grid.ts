/**
 * The layout grid: one tile drawn on a canvas the size of the visible area,
 * over a scroller that holds the tile's full size (a 128 x 128 tile at label
 * zoom is ~8000 px wide: only what is visible is drawn).
 *
 * Cells are `T<thread>/L<local>` (fragments, absolute `threadIdx.x`) or
 * offsets / banks (shared layouts); `layouts_geometry.ts` says where they fall.
 */

import { Colours } from './layouts_colours';
import {
  HEADER,
  IGeometry,
  IGridData,
  IGridView,
  ILevel,
  LABEL_LEVEL,
  LEVELS,
  MAX_HEIGHT,
  clampLevel,
  geometryOf,
  levelsFor
} from './layouts_geometry';
import { describeCell, paintTile } from './layouts_paint';

/** The hovered cell: where it is, the pointer (px, in the grid's box) and its facts as one line. */
export interface IHover {
  row: number;
  col: number;
  x: number;
  y: number;
  text: string;
}

/** Canvas renderer of one tile, with scrolling, zoom and hover. */
export class GridCanvas {
  constructor(host: HTMLElement, onHover: (hover: IHover | null) => void, onZoom: (level: number) => void) {
    this._onHover = onHover;
    this._onZoom = onZoom;
    this.node = document.createElement('div');
    this.node.className = 'tl-lay-view';
    this._scroller = document.createElement('div');
    this._scroller.className = 'tl-lay-scroller';
    this._scroller.tabIndex = 0;
    this._scroller.setAttribute('role', 'grid');
    this._spacer = document.createElement('div');
    this._spacer.className = 'tl-lay-spacer';
    this._scroller.append(this._spacer);
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'tl-lay-canvas';
    this.node.append(this._scroller, this.canvas);
    host.append(this.node);
    this._scroller.addEventListener('scroll', () => this.requestDraw());
    this._scroller.addEventListener('mousemove', event => this._hover(event));
    this._scroller.addEventListener('mouseleave', () => this._setHover(null));
    this._scroller.addEventListener('click', event => this._click(event));
    this._scroller.addEventListener('wheel', event => this._wheel(event), { passive: false });
  }

  readonly node: HTMLDivElement;
  readonly canvas: HTMLCanvasElement;

  /** The focusable element (keys are handled by the owner). */
  get focusTarget(): HTMLElement {
    return this._scroller;
  }

  /** Show `data` with `view`; `resetZoom` picks the level that fits. Returns the level used. */
  show(data: IGridData, view: IGridView, colours: Colours, resetZoom: boolean): number {
    this._data = data;
    this._levels = levelsFor(data);
    this._hoverCell = null; // another tile: the old hover means nothing here
    this._onHover(null);
    this._colours = colours;
    this._view = { ...view, level: resetZoom ? this.fitLevel(data) : clampLevel(view.level) };
    this._layout(null);
    this.drawNow();
    return this._view.level;
  }

  /** Redraw with new choices (same data). */
  update(view: IGridView, colours: Colours): void {
    const zoomed = view.level !== this._view?.level;
    this._colours = colours;
    this._view = { ...view, level: clampLevel(view.level) };
    if (zoomed) {
      this._layout(null);
    }
    this.drawNow();
  }

  /** Change zoom to `level`, keeping `anchor` (a cell, default: the visible centre) in place. */
  zoom(level: number, anchor?: { row: number; col: number; x: number; y: number }): void {
    if (this._view === null || this._data === null) {
      return;
    }
    level = clampLevel(level);
    if (level === this._view.level) {
      return;
    }
    const keep = anchor ?? this._centre();
    this._view = { ...this._view, level };
    this._layout(keep);
    this.drawNow();
    this._onZoom(level);
  }

  /** The largest level at which the tile fits the width (after wrapping), and the height for wrapped tiles. */
  fitLevel(data: IGridData): number {
    const width = this._availableWidth();
    const levels = levelsFor(data);
    for (let level = levels.length - 2; level > 0; level--) {
      const geometry = geometryOf(data, levels[level], width);
      const fits = geometry.bands > 1 ? geometry.height <= MAX_HEIGHT * 2 : geometry.width <= width;
      if (fits) {
        return level;
      }
    }
    return 0;
  }

  /** The cell width at `level` for the data shown (label levels fit its longest label). */
  cellWidth(level: number): number {
    return this._levels[clampLevel(level)].cw;
  }

  /** Re-fit the canvas to the visible area (the output was resized). */
  resize(): void {
    if (this._data !== null) {
      this._layout(this._centre());
      this.drawNow();
    }
  }

  requestDraw(): void {
    if (this._frame === 0) {
      this._frame = requestAnimationFrame(() => {
        this._frame = 0;
        this.drawNow();
      });
    }
  }

  /** Draw the visible part of the tile now. */
  drawNow(): void {
    const data = this._data;
    const view = this._view;
    const colours = this._colours;
    const geometry = this._geometry;
    const context = this.canvas.getContext('2d');
    if (data === null || view === null || colours === null || geometry === null || context === null) {
      return;
    }
    const width = this._scroller.clientWidth;
    const height = this._scroller.clientHeight;
    const ratio = window.devicePixelRatio || 1;
    if (this.canvas.width !== Math.round(width * ratio) || this.canvas.height !== Math.round(height * ratio)) {
      this.canvas.width = Math.round(width * ratio);
      this.canvas.height = Math.round(height * ratio);
      this.canvas.style.width = `${width}px`;
      this.canvas.style.height = `${height}px`;
    }
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    const { scrollLeft, scrollTop } = this._scroller;
    const firstLabel = paintTile(context, data, view, colours, geometry, this._hoverCell, scrollLeft, scrollTop, width, height);
    this.canvas.dataset.firstLabel = firstLabel;
  }

  dispose(): void {
    if (this._frame !== 0) {
      cancelAnimationFrame(this._frame);
    }
    this.node.remove();
  }

  /** The cell under canvas point (x, y), or null. */
  private _cellAt(x: number, y: number): { row: number; col: number } | null {
    const data = this._data;
    const geometry = this._geometry;
    if (data === null || geometry === null || x < geometry.gutter) {
      return null;
    }
    const { level, gutter, bandCols, bandHeight } = geometry;
    const px = x + this._scroller.scrollLeft - gutter;
    const py = y + this._scroller.scrollTop;
    const band = Math.floor(py / bandHeight);
    const inBand = py - band * bandHeight - HEADER;
    if (band < 0 || band >= geometry.bands || inBand < 0 || (geometry.bands === 1 && y < HEADER)) {
      return null;
    }
    const row = Math.floor(inBand / level.ch);
    const col = band * bandCols + Math.floor(px / level.cw);
    if (row >= data.rows || col >= Math.min(data.cols, (band + 1) * bandCols) || px < 0) {
      return null;
    }
    return { row, col };
  }

  private _point(event: MouseEvent): { x: number; y: number } {
    const box = this._scroller.getBoundingClientRect();
    return { x: event.clientX - box.left, y: event.clientY - box.top };
  }

  private _hover(event: MouseEvent): void {
    const point = this._point(event);
    const cell = this._cellAt(point.x, point.y);
    this._setHover(cell === null ? null : { ...cell, ...point, text: describeCell(this._data!, cell.row, cell.col) });
  }

  private _setHover(hover: IHover | null): void {
    const previous = this._hoverCell;
    if (hover === null && previous === null) {
      return;
    }
    this._onHover(hover);
    if (hover !== null && previous !== null && hover.row === previous.row && hover.col === previous.col) {
      return;
    }
    this._hoverCell = hover === null ? null : { row: hover.row, col: hover.col };
    this.requestDraw();
  }

  private _click(event: MouseEvent): void {
    const view = this._view;
    if (view === null || view.level >= LABEL_LEVEL) {
      return;
    }
    const point = this._point(event);
    const cell = this._cellAt(point.x, point.y);
    if (cell !== null) {
      this.zoom(LABEL_LEVEL, { ...cell, ...point });
    }
  }

  private _wheel(event: WheelEvent): void {
    if (!(event.ctrlKey || event.metaKey) || this._view === null) {
      return;
    }
    event.preventDefault();
    const point = this._point(event);
    const cell = this._cellAt(point.x, point.y);
    const level = this._view.level + (event.deltaY < 0 ? 1 : -1);
    this.zoom(level, cell === null ? undefined : { ...cell, ...point });
  }

  private _availableWidth(): number {
    return Math.max(200, (this._scroller.clientWidth || this.node.clientWidth || 800) - 2);
  }

  /** The cell at the centre of the visible area, with its canvas position. */
  private _centre(): { row: number; col: number; x: number; y: number } | undefined {
    const width = this._scroller.clientWidth;
    const height = this._scroller.clientHeight;
    const geometry = this._geometry;
    if (geometry === null) {
      return undefined;
    }
    for (const [x, y] of [
      [width / 2, height / 2],
      [geometry.gutter + 1, HEADER + 1]
    ]) {
      const cell = this._cellAt(x, y);
      if (cell !== null) {
        return { ...cell, x, y };
      }
    }
    return undefined;
  }

  /** Size the scroller for the current data and level; scroll so `keep` stays where it was. */
  private _layout(keep: { row: number; col: number; x: number; y: number } | null | undefined): void {
    const data = this._data!;
    const geometry = geometryOf(data, this._levels[this._view!.level], this._availableWidth());
    this._geometry = geometry;
    this.node.dataset.bands = String(geometry.bands);
    this.node.dataset.gutter = String(geometry.gutter);
    this._spacer.style.width = `${geometry.width}px`;
    this._spacer.style.height = `${geometry.height}px`;
    const scrollbar = geometry.width > this._availableWidth() ? 16 : 0;
    this._scroller.style.height = `${Math.min(MAX_HEIGHT, geometry.height + scrollbar)}px`;
    if (keep) {
      const band = Math.floor(keep.col / geometry.bandCols);
      const x = geometry.gutter + (keep.col - band * geometry.bandCols) * geometry.level.cw;
      const y = band * geometry.bandHeight + HEADER + keep.row * geometry.level.ch;
      this._scroller.scrollLeft = Math.max(0, x - keep.x);
      this._scroller.scrollTop = Math.max(0, y - keep.y);
    } else {
      this._scroller.scrollLeft = 0;
      this._scroller.scrollTop = 0;
    }
  }

  private _onHover: (hover: IHover | null) => void;
  private _onZoom: (level: number) => void;
  private _scroller: HTMLDivElement;
  private _spacer: HTMLDivElement;
  private _data: IGridData | null = null;
  private _view: IGridView | null = null;
  private _colours: Colours | null = null;
  private _geometry: IGeometry | null = null;
  private _levels: ILevel[] = LEVELS;
  private _hoverCell: { row: number; col: number } | null = null;
  private _frame = 0;
}

