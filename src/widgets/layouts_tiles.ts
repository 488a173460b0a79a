/**
 * A tile's tables as the kernel sends them: the answer to a `grid` request
 * (`LayoutsWidget.reply`), its tables in two int32 buffers, read into the
 * grid's data.
 */

import { IEntry } from './layouts_facts';
import { IGridData } from './layouts_geometry';

/** The kernel's answer to a `grid` request (`LayoutsWidget.reply`), its tables in two buffers. */
export interface IReply {
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

/** The key a tile is kept under: buffer, replica and tile. */
export function tileKey(name: string | undefined, replica: number, tile: number): string {
  return `${name}/${replica}/${tile}`;
}

/** The grid data of a `grid` reply, or null when the reply is not one (or its buffers are missing). */
export function readTile(message: IReply, buffers: DataView[], entries: IEntry[]): IGridData | null {
  if (message.type !== 'grid' || buffers.length < 2 || message.rows === undefined || message.cols === undefined) {
    return null;
  }
  const entry = entries.find(candidate => candidate.name === message.name);
  return {
    kind: message.kind ?? 'fragment',
    rows: message.rows,
    cols: message.cols,
    replica: message.replica ?? 0,
    tile: message.tile ?? 0,
    a: int32(buffers[0]),
    b: int32(buffers[1]),
    start: entry?.threads?.[0] ?? 0
  };
}

/** A little-endian int32 view of a message buffer (copied: the buffer's offset may not be 4-aligned). */
function int32(view: DataView): Int32Array {
  return new Int32Array(view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength));
}
