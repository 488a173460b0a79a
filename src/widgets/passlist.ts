/**
 * A keyboard-driven list of rows (the pass list, the compare list): j/k and
 * the arrows move the selection, Home/End jump, Enter hands focus on; every
 * key it handles stops here, so the notebook never moves under the user.
 */

import { h, keepKeys } from './dom';

export interface IListRow {
  /** Cells of the row, in order (text only). */
  cells: { text: string; className: string }[];
  title: string;
  className?: string;
}

export class KeyList {
  readonly node: HTMLDivElement;

  constructor(
    rows: IListRow[],
    label: string,
    onSelect: (position: number) => void,
    onEnter: () => void,
    onHover?: (position: number) => void
  ) {
    this._onSelect = onSelect;
    this.node = h('div', 'tl-list');
    this.node.tabIndex = 0;
    this.node.setAttribute('role', 'listbox');
    this.node.setAttribute('aria-label', label);
    keepKeys(this.node);
    this._rows = rows.map((row, position) => {
      const node = h('div', `tl-row ${row.className ?? ''}`.trim());
      node.setAttribute('role', 'option');
      node.id = `tl-row-${KeyList._ids++}`;
      node.title = row.title;
      node.dataset.position = String(position);
      for (const cell of row.cells) {
        node.appendChild(h('span', cell.className, cell.text));
      }
      node.addEventListener('click', () => {
        this.node.focus({ preventScroll: true });
        onSelect(position);
      });
      if (onHover) {
        node.addEventListener('pointerenter', () => onHover(position));
      }
      this.node.appendChild(node);
      return node;
    });
    this.node.addEventListener('keydown', event => {
      const step = { j: 1, ArrowDown: 1, k: -1, ArrowUp: -1, PageDown: 10, PageUp: -10 }[event.key];
      let handled = true;
      if (step !== undefined && !event.altKey && !event.ctrlKey && !event.metaKey) {
        this.move(step);
      } else if (event.key === 'Home') {
        this.moveTo(this._visible()[0]);
      } else if (event.key === 'End') {
        const visible = this._visible();
        this.moveTo(visible[visible.length - 1]);
      } else if (event.key === 'Enter') {
        onEnter();
      } else {
        handled = false;
      }
      if (handled) {
        event.preventDefault();
        event.stopPropagation();
      }
    });
  }

  /** Mark row `position` selected (no callback) and keep it in view. */
  mark(position: number): void {
    this._selected = position;
    this._rows.forEach((row, k) => {
      const on = k === position;
      row.classList.toggle('tl-selected', on);
      row.setAttribute('aria-selected', on ? 'true' : 'false');
    });
    const row = this._rows[position];
    if (row) {
      this.node.setAttribute('aria-activedescendant', row.id);
    }
    this.reveal();
  }

  /** Scroll the list (only: scrollIntoView would scroll the notebook too) so that the selected row is in view, as
   * after the list's box changed size (a narrow view stacks it, shorter, above the detail). */
  reveal(): void {
    const row = this._rows[this._selected];
    if (!row) {
      return;
    }
    const rowBox = row.getBoundingClientRect();
    const listBox = this.node.getBoundingClientRect();
    if (rowBox.top < listBox.top || rowBox.bottom > listBox.bottom) {
      this.node.scrollTop += rowBox.top - listBox.top - this.node.clientHeight / 2;
    }
  }

  /** Move the selection `step` visible rows. */
  move(step: number): void {
    const visible = this._visible();
    if (!visible.length) {
      return;
    }
    const at = visible.indexOf(this._selected);
    const next = at < 0 ? visible[step > 0 ? 0 : visible.length - 1] : visible[Math.max(0, Math.min(visible.length - 1, at + step))];
    this.moveTo(next);
  }

  /** The visible row `step` rows from `position`, if any. */
  neighbour(position: number, step: number): number | undefined {
    const visible = this._visible();
    const at = visible.indexOf(position);
    return at < 0 ? undefined : visible[at + step];
  }

  moveTo(position: number | undefined): void {
    if (position !== undefined && position !== this._selected) {
      this.mark(position);
      this._onSelect(position);
    }
  }

  /** Show only the rows for which `keep(position)` is true. */
  filter(keep: (position: number) => boolean): number {
    let shown = 0;
    this._rows.forEach((row, position) => {
      const visible = keep(position);
      row.hidden = !visible;
      shown += visible ? 1 : 0;
    });
    return shown;
  }

  row(position: number): HTMLElement | undefined {
    return this._rows[position];
  }

  private _visible(): number[] {
    return this._rows.flatMap((row, position) => (row.hidden ? [] : [position]));
  }

  private static _ids = 0;
  private _rows: HTMLElement[];
  private _selected = -1;
  private _onSelect: (position: number) => void;
}
