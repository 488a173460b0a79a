/**
 * The controls above a shown pass: what to diff it against, the mode (side by
 * side, unified, the IR after it), whitespace ignored or not, and line
 * wrapping. Choices are saved to the model; the tab redraws on its changes.
 */

import { button, checkbox, h } from './dom';
import { IModel, save } from './model';
import { IPassRow } from './pass_texts';

const MODES: [string, string, string][] = [
  ['split', 'Side by side', 'The IR before (left) and after (right) this pass, scrolled together'],
  ['unified', 'Unified', 'One column: removed lines above the lines that replace them'],
  ['ir', 'IR after this pass', 'The whole IR right after this pass']
];

/** The detail's controls, built once and brought up to date for each pass shown. */
export class DiffControls {
  readonly node: HTMLElement;

  constructor(model: IModel, rows: IPassRow[], wrap: boolean, onWrap: (on: boolean) => void) {
    this._model = model;
    this._rows = rows;
    this.node = h('div', 'tl-toolbar tl-detail-controls');
    this._against = h('select', 'tl-base');
    this._against.title = 'Diff this pass against the pass before it, or against any pass';
    this._first = h('option', '', '');
    this._first.value = '-1';
    this._against.appendChild(this._first);
    for (const row of rows) {
      const option = h('option', '', `vs #${row.index} ${row.name}`);
      option.value = String(row.index);
      this._against.appendChild(option);
    }
    this._against.addEventListener('change', () => save(model, 'base_index', Number(this._against.value)));
    const group = h('div', 'tl-segmented');
    group.setAttribute('role', 'group');
    this._modes = MODES.map(([value, label, title]) => {
      const b = button(label, title, () => save(model, 'diff_mode', value));
      b.dataset.mode = value;
      group.appendChild(b);
      return b;
    });
    const ignoreLabel = checkbox('ignore whitespace', true, on => save(model, 'ignore_whitespace', on));
    ignoreLabel.classList.add('tl-ignore-ws');
    ignoreLabel.title = 'Re-indented lines do not count as changed';
    this._ignore = ignoreLabel.querySelector('input')!;
    this.node.append(this._against, group, ignoreLabel, checkbox('wrap lines', wrap, onWrap));
  }

  /** Bring the controls up to date for the pass at `position` (index `index`) shown in `mode`. */
  update(index: number, position: number, mode: string): HTMLElement {
    const before = this._rows[position - 1];
    this._first.textContent = before ? `vs the pass before (#${before.index} ${before.name})` : 'vs nothing (first pass)';
    for (const option of Array.from(this._against.options)) {
      option.hidden = option.value === String(index);
    }
    this._against.value = String(this._model.get('base_index'));
    this._against.disabled = mode === 'ir';
    for (const b of this._modes) {
      const on = b.dataset.mode === this._model.get('diff_mode'); // the choice, even when shown unified for want of room
      b.classList.toggle('tl-on', on);
      b.setAttribute('aria-pressed', on ? 'true' : 'false');
    }
    this._ignore.checked = this._model.get('ignore_whitespace');
    return this.node;
  }

  private _model: IModel;
  private _rows: IPassRow[];
  private _against: HTMLSelectElement;
  private _first: HTMLOptionElement;
  private _modes: HTMLButtonElement[];
  private _ignore: HTMLInputElement;
}
