/**
 * What the layout grid paints: each visible cell's colour and label, the
 * outline of the cells that share the hovered cell's thread (or bank), the row
 * and column numbers, and a cell's facts as one line for the hover tip.
 */

import { Colours, ICellColour, ITheme } from './layouts_colours';
import { HEADER, IGeometry, IGridData, IGridView, ILevel, tickStep } from './layouts_geometry';

/** Paint the visible part of `data` (scrolled to `sx`, `sy`; `width` × `height` px); returns the first label drawn. */
export function paintTile(
  context: CanvasRenderingContext2D,
  data: IGridData,
  view: IGridView,
  colours: Colours,
  geometry: IGeometry,
  hover: { row: number; col: number } | null,
  sx: number,
  sy: number,
  width: number,
  height: number
): string {
  const theme = colours.theme;
  context.fillStyle = theme.background;
  context.fillRect(0, 0, width, height);
  const { level, gutter, bandCols, bandHeight } = geometry;
  const gap = level.cw >= 6 ? 1 : 0;
  // The hovered cell's thread (fragments) or bank (shared): every cell sharing it is outlined.
  const owner = data.kind === 'fragment' ? data.a : data.b;
  const hovered = hover !== null ? owner[hover.row * data.cols + hover.col] : null;
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
        const colour = cellColour(data, view, colours, index);
        context.fillStyle = colour.fill;
        context.fillRect(x, y, level.cw - gap, level.ch - gap);
        if (level.lines > 0) {
          const label = cellLabel(data, view, index, level);
          if (label !== null) {
            if (firstLabel === '') {
              firstLabel = label.join('/');
            }
            context.fillStyle = colour.text;
            drawLabel(context, label, x, y, level, gap);
          }
        }
        if (hovered !== null && owner[index] === hovered) {
          context.strokeStyle = theme.accent;
          context.lineWidth = level.cw >= 6 ? 1.5 : 1;
          context.strokeRect(x + 0.75, y + 0.75, level.cw - gap - 1.5, level.ch - gap - 1.5);
        }
      }
    }
    drawColumnNumbers(context, theme, data, geometry, band, geometry.bands > 1 ? top - HEADER : 0, sx, width);
  }
  drawRowNumbers(context, theme, data, geometry, sy, height);
  return firstLabel;
}

function cellColour(data: IGridData, view: IGridView, colours: Colours, index: number): ICellColour {
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

/** One or two lines of `label`, centred in the cell at (x, y). */
function drawLabel(context: CanvasRenderingContext2D, label: string[], x: number, y: number, level: ILevel, gap: number): void {
  const middle = y + (level.ch - gap) / 2;
  if (label.length === 1) {
    context.fillText(label[0], x + (level.cw - gap) / 2, middle, level.cw - 3);
  } else {
    context.fillText(label[0], x + (level.cw - gap) / 2, middle - level.font / 2 - 1, level.cw - 3);
    context.fillText(label[1], x + (level.cw - gap) / 2, middle + level.font / 2 + 1, level.cw - 3);
  }
}

function cellLabel(data: IGridData, view: IGridView, index: number, level: ILevel): string[] | null {
  if (data.kind === 'shared') {
    return [String(view.label === 'bank' ? data.b[index] : data.a[index])];
  }
  const thread = `T${data.a[index]}`;
  const local = `L${data.b[index]}`;
  return level.lines === 2 ? [thread, local] : [`${thread}/${local}`];
}

/** Clear the strip where numbers go and set the muted text they are drawn in. */
function numberStrip(context: CanvasRenderingContext2D, theme: ITheme, x: number, y: number, width: number, height: number, align: CanvasTextAlign): void {
  context.fillStyle = theme.background;
  context.fillRect(x, y, width, height);
  context.fillStyle = theme.muted;
  context.textAlign = align;
  context.textBaseline = 'middle';
}

function drawColumnNumbers(
  context: CanvasRenderingContext2D,
  theme: ITheme,
  data: IGridData,
  geometry: IGeometry,
  band: number,
  y: number,
  sx: number,
  width: number
): void {
  const { level, gutter, bandCols } = geometry;
  numberStrip(context, theme, 0, y, width, HEADER, 'center');
  context.font = `10px ${theme.font}`;
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

function drawRowNumbers(
  context: CanvasRenderingContext2D,
  theme: ITheme,
  data: IGridData,
  geometry: IGeometry,
  sy: number,
  height: number
): void {
  const { level, gutter, bandHeight } = geometry;
  numberStrip(context, theme, 0, 0, gutter - 2, height, 'right');
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

/** Row, col and every fact of one cell, as one line. */
export function describeCell(data: IGridData, row: number, col: number): string {
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
