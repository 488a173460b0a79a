/**
 * The layout grid's data and geometry: one tile's tables, the zoom levels, and
 * where bands, gutters and cells fall at a level (a tile of few long rows wraps
 * into bands, so it is never squashed into a strip; the wrapping rule comes
 * with the tab's data, `tilelab.views.layouts.data.WRAP`, which the snapshot follows too).
 */

export type LayoutKind = 'fragment' | 'shared';
export type ColourMode = 'warp' | 'thread' | 'local';
export type LabelMode = 'offset' | 'bank';

/** How wide tiles wrap: tiles of at most `rows` rows wrap into bands a multiple of `align` columns wide. */
export interface IWrap {
  rows: number;
  align: number;
}

/** One tile's tables, as the kernel sent them. */
export interface IGridData {
  kind: LayoutKind;
  rows: number;
  cols: number;
  replica: number;
  tile: number;
  /** Fragments: absolute threadIdx.x; shared: physical element offset. */
  a: Int32Array;
  /** Fragments: local register index; shared: 32-bank id. */
  b: Int32Array;
  /** Fragments: the first threadIdx.x of the fragment's thread range. */
  start: number;
  wrap: IWrap;
}

/** What the user chose: zoom level, colouring, labels and the warp filter. */
export interface IGridView {
  level: number;
  colour: ColourMode;
  label: LabelMode;
  warp: number | null;
}

export interface ILevel {
  cw: number;
  ch: number;
  /** Label lines drawn in a cell (0: colours only). */
  lines: number;
  font: number;
}

/** Zoom levels, smallest first: colours only up to 16 px, then two-line and one-line labels. */
export const LEVELS: ILevel[] = [
  { cw: 3, ch: 3, lines: 0, font: 10 },
  { cw: 6, ch: 6, lines: 0, font: 10 },
  { cw: 10, ch: 10, lines: 0, font: 10 },
  { cw: 16, ch: 16, lines: 0, font: 10 },
  { cw: 36, ch: 30, lines: 2, font: 10 },
  { cw: 66, ch: 20, lines: 1, font: 10 },
  { cw: 84, ch: 26, lines: 1, font: 12 }
];
const CHAR_WIDTH = 0.62; // of the font size: monospace digits, a little generous
/** The first level whose cells carry one-line `T#/L#` labels. */
export const LABEL_LEVEL = 5;

export const HEADER = 16; // px of the column-number header
const BAND_GAP = 12; // px between wrapped bands
export const MAX_HEIGHT = 560; // px of the visible area at most

export interface IGeometry {
  level: ILevel;
  gutter: number;
  bandCols: number;
  bands: number;
  bandHeight: number;
  width: number;
  height: number;
}

export function clampLevel(level: number): number {
  return Math.max(0, Math.min(LEVELS.length - 1, Math.round(level)));
}

/** A number every `step` cells, `step` a power of two, so numbers are at least `room` px apart. */
export function tickStep(cell: number, room: number): number {
  let step = 1;
  while (step * cell < room) {
    step *= 2;
  }
  return step;
}

/** The zoom levels for `data`: one-line label cells as wide as its longest `T#/L#` (or offset) needs. */
export function levelsFor(data: IGridData): ILevel[] {
  let a = 0;
  let b = 0;
  for (let index = 0; index < data.a.length; index++) {
    a = Math.max(a, Math.abs(data.a[index]));
    b = Math.max(b, Math.abs(data.b[index]));
  }
  const chars = data.kind === 'fragment' ? String(a).length + String(b).length + 3 : String(a).length;
  return LEVELS.map(level =>
    level.lines === 1 ? { ...level, cw: Math.max(level.font * 3, Math.ceil(chars * level.font * CHAR_WIDTH) + 10) } : level
  );
}

/** Where bands, gutter and the full size fall for `data` at `level` in `width` px. */
export function geometryOf(data: IGridData, level: ILevel, width: number): IGeometry {
  const gutter = 8 + 7 * String(Math.max(0, data.rows - 1)).length;
  const room = Math.max(1, Math.floor((width - gutter) / level.cw));
  let bandCols = data.cols;
  const { rows, align } = data.wrap;
  if (data.rows <= rows && data.cols > room) {
    // Bands a multiple of `align` columns wide (a power of two when narrower) keep the layout's strides aligned.
    bandCols = 1;
    while (bandCols * 2 <= Math.min(room, align)) {
      bandCols *= 2;
    }
    bandCols = room >= align ? Math.floor(room / align) * align : bandCols;
  }
  const bandCount = Math.ceil(data.cols / bandCols);
  const bandHeight = HEADER + data.rows * level.ch + (bandCount > 1 ? BAND_GAP : 0);
  return {
    level,
    gutter,
    bandCols,
    bands: bandCount,
    bandHeight,
    width: gutter + bandCols * level.cw + 1,
    height: bandCount * bandHeight - (bandCount > 1 ? BAND_GAP : 0)
  };
}
