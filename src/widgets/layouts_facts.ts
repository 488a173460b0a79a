/**
 * What the Layouts tab says about the buffer shown: its facts line, TileLang's
 * description of the layout, and the warp legend (fragments), whose chips
 * pick the one warp to colour.
 */

import { button, h } from './dom';
import { Colours, IPalette } from './layouts_colours';
import { BUTTON } from './layouts_controls';
import { IWrap } from './layouts_geometry';

/** The tab's data (`tilelab.views.layouts.data.layouts_data`): the snapshot renders the same dict. */
export interface ILayoutsData {
  layouts: IEntry[];
  palette: IPalette;
  wrap: IWrap;
}

/** One 2-D tile's tables, row-major: a fragment's `thread` and `local`, a shared layout's `offset` and `bank`. */
export interface ITile {
  replica: number;
  tile: number;
  rows: number;
  cols: number;
  thread?: number[];
  local?: number[];
  offset?: number[];
  bank?: number[];
}

/** One layout's facts and its first tile (`tilelab.views.layouts.data.layout_entry`). */
export interface IEntry {
  name: string;
  buffer: string;
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
  /** Replica 0, tile 0; null when the record kept no table. */
  tile: ITile | null;
}

/** Write `entry`'s facts line into `facts` and its TileLang description into `description`. */
export function renderFacts(facts: HTMLElement, description: HTMLElement, entry: IEntry): void {
  const shape = entry.shape.join('×');
  facts.replaceChildren(
    h('b', '', entry.name),
    document.createTextNode(` · ${entry.kind} ${shape} ${entry.dtype} · ${entry.summary}`)
  );
  if (entry.threads !== null && entry.threads[0] !== 0) {
    // The separator stays outside the span: an inline-block drops its own leading space.
    facts.append(
      ' · ',
      h('span', 'tl-lay-range', `thread_range [${entry.threads[0]}, ${entry.threads[1]}): ids are threadIdx.x`)
    );
  }
  description.replaceChildren(
    h('summary', '', 'TileLang layout'),
    h('pre', 'tl-lay-pre', entry.description)
  );
}

/** Warp chips (fragments): a click keeps only that warp's colours (by lane) and greys the rest. */
export class WarpLegend {
  readonly node = h('div', 'tl-lay-legend');

  /** The warp coloured alone, or null for every warp. */
  warp: number | null = null;

  /** `onChange` redraws the grid after a chip was clicked. */
  constructor(onChange: () => void) {
    this._onChange = onChange;
  }

  render(entry: IEntry, colours: Colours): void {
    this.node.replaceChildren();
    if (entry.kind !== 'fragment' || entry.threads === null) {
      return;
    }
    const [start, end] = entry.threads;
    const chips: HTMLButtonElement[] = [];
    const choose = (warp: number | null) => {
      this.warp = this.warp === warp ? null : warp;
      for (const chip of chips) {
        const value = chip.dataset.warp === 'all' ? null : Number(chip.dataset.warp);
        chip.classList.toggle('tl-mod-active', value === this.warp);
      }
      this._onChange();
    };
    const all = button('all warps', 'colour every warp', () => choose(null), BUTTON);
    all.dataset.warp = 'all';
    all.classList.toggle('tl-mod-active', this.warp === null);
    chips.push(all);
    for (let warp = Math.floor(start / 32); warp <= Math.floor((end - 1) / 32); warp++) {
      const first = Math.max(start, warp * 32);
      const last = Math.min(end, (warp + 1) * 32) - 1;
      const chip = button('', `only warp ${warp}: threads ${first}–${last} coloured by lane`, () => choose(warp), BUTTON);
      chip.dataset.warp = String(warp);
      const swatch = h('span', 'tl-lay-swatch');
      swatch.style.background = colours.warp(warp, 0).fill;
      chip.append(swatch, document.createTextNode(`warp ${warp} · T${first}–${last}`));
      chips.push(chip);
    }
    this.node.append(...chips);
  }

  private _onChange: () => void;
}
