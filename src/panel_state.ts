/**
 * What the panel shows, as one value: where the connection to the active
 * notebook's kernel stands, and the kernel's records and tuning runs.
 * `TileLabModel` replaces it as a whole on every change.
 */

import { IRecordSummary, ITuningSummary } from './protocol';

/** Where the connection to the active notebook's kernel stands. */
export type Phase =
  | 'no-notebook' // no notebook is active
  | 'no-kernel' // the notebook has no running kernel
  | 'connecting' // comm opened, waiting for the kernel's hello
  | 'not-loaded' // the kernel closed the comm: TileLab is not loaded there
  | 'ready' // subscribed; records and tuning runs are live
  | 'incompatible'; // the kernel speaks another protocol version

/** The model's state, replaced as a whole on every change. */
export interface IPanelState {
  phase: Phase;
  notebook: string | null;
  records: IRecordSummary[];
  tuning: ITuningSummary[];
  /** The kernel's TileLab version, once it said hello. */
  kernelVersion: string | null;
  /** The last problem to show (a kernel error message, a malformed reply). */
  problem: string | null;
}

/** The state with no notebook: nothing to show. */
export const EMPTY_STATE: IPanelState = {
  phase: 'no-notebook',
  notebook: null,
  records: [],
  tuning: [],
  kernelVersion: null,
  problem: null
};

/** `items` with `item` in place of the one with its id, or at the end. */
export function upsert<T extends { id: string }>(items: T[], item: T): T[] {
  const index = items.findIndex(existing => existing.id === item.id);
  if (index < 0) {
    return [...items, item];
  }
  const copy = [...items];
  copy[index] = item;
  return copy;
}
