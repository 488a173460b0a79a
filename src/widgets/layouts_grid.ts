/**
 * The layout grid: one tile drawn on a canvas the size of the visible area,
 * over a scroller that holds the tile's full size (a 128 x 128 tile at label
 * zoom is ~8000 px wide: only what is visible is drawn).
 *
 * Cells are `T<thread>/L<local>` (fragments, absolute `threadIdx.x`) or
 * offsets / banks (shared layouts); `layouts_geometry.ts` says where they fall.
 */

import { Colours, ICellColour } from './layouts_colours';
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
  levelsFor,
  tickStep
} from './layouts_geometry';

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
    const theme = colours.theme;
    context.fillStyle = theme.background;
    context.fillRect(0, 0, width, height);
    const sx = this._scroller.scrollLeft;
    const sy = this._scroller.scrollTop;
    const { level, gutter, bandCols, bandHeight } = geometry;
    const gap = level.cw >= 6 ? 1 : 0;
    // The hovered cell's thread (fragments) or bank (shared): every cell sharing it is outlined.
    const owner = data.kind === 'fragment' ? data.a : data.b;
    const hovered = this._hoverCell !== null ? owner[this._hoverCell.row * data.cols + this._hoverCell.col] : null;
    let firstLabel = '';
    for (let band = 0; band < geometry.bands; band++) {
      const top = band * bandHeight + HEADER - sy;
      if (top > height || top + data.rows * level.ch < 0) {
        continue;
      }
      const bandStart = band * bandCols;
      const bandEnd = Math.min(data.cols, bandStart + bandCols);
      const c0 = bandStart + Math.max(0, Math.floor(sx / level.cw));
      const c1 = Math.min(bandEnd, bandStart + Math.ceil((sx + width - gutter) / level.cw) + 1);
      const r0 = Math.max(0, Math.floor(-top / level.ch));
      const r1 = Math.min(data.rows, Math.ceil((height - top) / level.ch) + 1);
      context.font = `${level.font}px ${theme.font}`;
      context.textAlign = 'center';
      context.textBaseline = 'middle';
      for (let row = r0; row < r1; row++) {
        const y = top + row * level.ch;
        for (let col = c0; col < c1; col++) {
          const x = gutter + (col - bandStart) * level.cw - sx;
          const index = row * data.cols + col;
          const colour = this._colourOf(data, view, colours, index);
          context.fillStyle = colour.fill;
          context.fillRect(x, y, level.cw - gap, level.ch - gap);
          if (level.lines > 0) {
            const label = this._label(data, view, index, level);
            if (label !== null) {
              if (firstLabel === '') {
                firstLabel = label.join('/');
              }
              context.fillStyle = colour.text;
              const middle = y + (level.ch - gap) / 2;
              if (label.length === 1) {
                context.fillText(label[0], x + (level.cw - gap) / 2, middle, level.cw - 3);
              } else {
                context.fillText(label[0], x + (level.cw - gap) / 2, middle - level.font / 2 - 1, level.cw - 3);
                context.fillText(label[1], x + (level.cw - gap) / 2, middle + level.font / 2 + 1, level.cw - 3);
              }
            }
          }
          if (hovered !== null && owner[index] === hovered) {
            context.strokeStyle = theme.accent;
            context.lineWidth = level.cw >= 6 ? 1.5 : 1;
            context.strokeRect(x + 0.75, y + 0.75, level.cw - gap - 1.5, level.ch - gap - 1.5);
          }
        }
      }
      this._drawColumnNumbers(context, data, geometry, band, geometry.bands > 1 ? top - HEADER : 0, sx, width);
    }
    this._drawRowNumbers(context, data, geometry, sy, height);
    this.canvas.dataset.firstLabel = firstLabel;
  }

  dispose(): void {
    if (this._frame !== 0) {
      cancelAnimationFrame(this._frame);
    }
    this.node.remove();
  }

  private _colourOf(data: IGridData, view: IGridView, colours: Colours, index: number): ICellColour {
    if (data.kind === 'shared') {
      return colours.categorical(data.b[index]);
    }
    const thread = data.a[index];
    const warp = Math.floor(thread / 32);
    if (view.warp !== null) {
      return warp === view.warp ? colours.categorical(thread % 32) : colours.muted;
    }
    switch (view.colour) {
      case 'thread':
        return colours.categorical(thread);
      case 'local':
        return colours.categorical(data.b[index]);
      default:
        return colours.warp(warp, thread % 32);
    }
  }

  private _label(data: IGridData, view: IGridView, index: number, level: ILevel): string[] | null {
    if (data.kind === 'shared') {
      return [String(view.label === 'bank' ? data.b[index] : data.a[index])];
    }
    const thread = `T${data.a[index]}`;
    const local = `L${data.b[index]}`;
    return level.lines === 2 ? [thread, local] : [`${thread}/${local}`];
  }

  private _drawColumnNumbers(
    context: CanvasRenderingContext2D,
    data: IGridData,
    geometry: IGeometry,
    band: number,
    y: number,
    sx: number,
    width: number
  ): void {
    const { level, gutter, bandCols } = geometry;
    const theme = this._colours!.theme;
    context.fillStyle = theme.background;
    context.fillRect(0, y, width, HEADER);
    context.fillStyle = theme.muted;
    context.font = `10px ${theme.font}`;
    context.textAlign = 'center';
    context.textBaseline = 'middle';
    const step = tickStep(level.cw, 30);
    const start = band * bandCols;
    const end = Math.min(data.cols, start + bandCols);
    for (let col = start; col < end; col += step) {
      const x = gutter + (col - start) * level.cw - sx + (step === 1 ? level.cw / 2 : 0);
      if (x >= gutter - 1 && x <= width) {
        context.textAlign = step === 1 ? 'center' : 'left';
        context.fillText(String(col), x, y + HEADER / 2);
      }
    }
  }

  private _drawRowNumbers(
    context: CanvasRenderingContext2D,
    data: IGridData,
    geometry: IGeometry,
    sy: number,
    height: number
  ): void {
    const { level, gutter, bandHeight } = geometry;
    const theme = this._colours!.theme;
    context.fillStyle = theme.background;
    context.fillRect(0, 0, gutter - 2, height);
    context.fillStyle = theme.muted;
    context.textAlign = 'right';
    context.textBaseline = 'middle';
    const step = tickStep(level.ch, 14);
    for (let band = 0; band < geometry.bands; band++) {
      const top = band * bandHeight + HEADER - sy;
      for (let row = 0; row < data.rows; row += step) {
        const y = top + row * level.ch + (step === 1 ? level.ch / 2 : 5);
        if (y >= HEADER && y <= height) {
          context.fillText(String(row), gutter - 5, y);
        }
      }
    }
    if (geometry.bands === 1) {
      context.fillStyle = theme.background;
      context.fillRect(0, 0, gutter - 2, HEADER);
    }
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
    this._setHover(cell === null ? null : { ...cell, ...point, text: this._describe(cell.row, cell.col) });
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

  /** Row, col and every fact of one cell, as one line. */
  private _describe(row: number, col: number): string {
    const data = this._data!;
    const index = row * data.cols + col;
    if (data.kind === 'shared') {
      return `row ${row}, col ${col} · offset ${data.a[index]} · bank ${data.b[index]}`;
    }
    const thread = data.a[index];
    const relative = thread - data.start;
    const own = data.start !== 0 ? ` (thread ${relative} of the fragment)` : '';
    return (
      `row ${row}, col ${col} · threadIdx.x ${thread}${own} · warp ${Math.floor(thread / 32)}, lane ${thread % 32}` +
      ` · local ${data.b[index]} · replica ${data.replica}`
    );
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

