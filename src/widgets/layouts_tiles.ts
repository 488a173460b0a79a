/**
 * A tile's tables as the tab's data carries them (`tilelab.views.layouts.data.layout_tile`):
 * a layout's first tile comes with the tab's data, any other with the answer to
 * a `layout_tile` request; both are read into the grid's data here.
 */

import { IEntry, ITile } from './layouts_facts';
import { IGridData, IWrap } from './layouts_geometry';

/** The answer to a `layout_tile` request: the tile of layout `name`. */
export interface ITileReply extends ITile {
  name: string;
}

/** The key a tile is kept under: buffer, replica and tile. */
export function tileKey(name: string | undefined, replica: number, tile: number): string {
  return `${name}/${replica}/${tile}`;
}

/** The grid data of `tile`, a tile of `entry`; null when its tables are missing. */
export function readTile(entry: IEntry, tile: ITile, wrap: IWrap): IGridData | null {
  const fragment = entry.kind === 'fragment';
  const a = fragment ? tile.thread : tile.offset;
  const b = fragment ? tile.local : tile.bank;
  if (a === undefined || b === undefined) {
    return null;
  }
  return {
    kind: fragment ? 'fragment' : 'shared',
    rows: tile.rows,
    cols: tile.cols,
    replica: tile.replica,
    tile: tile.tile,
    a: Int32Array.from(a),
    b: Int32Array.from(b),
    start: entry.threads?.[0] ?? 0,
    wrap
  };
}
