/**
 * The TileLab side panel and the main-area tab that shows one item's snapshot.
 *
 * Everything the kernel sends is shown as text (`textContent`) or, for the
 * static HTML snapshots, inside an iframe with an empty `sandbox` attribute:
 * no script in it can run and it cannot reach this page.
 */

import { MainAreaWidget } from '@jupyterlab/apputils';
import type { INotebookTracker } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';
import { LabIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { IPanelState, TileLabModel } from './model';
import type { IItemReply, IRecordSummary, ITuningSummary, ItemKind } from './protocol';

const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16">' +
  '<g class="jp-icon3" fill="#616161">' +
  '<rect x="1" y="1" width="6" height="6" rx="1"/><rect x="9" y="1" width="6" height="6" rx="1"/>' +
  '<rect x="1" y="9" width="6" height="6" rx="1"/><rect x="9" y="9" width="6" height="6" rx="1" opacity="0.5"/>' +
  '</g></svg>';

export const tilelabIcon = new LabIcon({ name: 'tilelab:tiles', svgstr: ICON_SVG });

export namespace TileLabPanel {
  export interface IOptions {
    tracker: INotebookTracker;
    trans: TranslationBundle;
    /** Put a widget in the main area (or bring it to the front). */
    show: (widget: Widget) => void;
  }
}

/** The right-side panel: the active kernel's records and tuning runs. */
export class TileLabPanel extends Widget {
  constructor(options: TileLabPanel.IOptions) {
    super();
    this._trans = options.trans;
    this._show = options.show;
    this.id = 'tilelab-panel';
    this.addClass('tl-Panel');
    this.title.icon = tilelabIcon;
    this.title.caption = this._trans.__('TileLab');
    this.model = new TileLabModel(options.tracker);
    this.model.stateChanged.connect(this._render, this);
    this._render();
  }

  readonly model: TileLabModel;

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.model.dispose();
    for (const widget of this._snapshots.values()) {
      widget.dispose();
    }
    this._snapshots.clear();
    super.dispose();
  }

  /** Open the snapshot of one item in a main-area tab. */
  async open(kind: ItemKind, id: string): Promise<void> {
    const reply = await this.model.requestItem(kind, id, true);
    const key = `${kind}:${id}`;
    let widget = this._snapshots.get(key);
    if (widget === undefined || widget.isDisposed) {
      widget = new MainAreaWidget({ content: new SnapshotView() });
      widget.id = `tilelab-${kind}-${id}`;
      widget.title.icon = tilelabIcon;
      widget.title.closable = true;
      this._snapshots.set(key, widget);
    }
    widget.title.label = this._itemTitle(reply);
    widget.content.setSnapshot(reply.html ?? null, this._trans.__('The kernel sent no snapshot for this item.'));
    this._show(widget);
  }

  private _render(): void {
    const state = this.model.state;
    const trans = this._trans;
    const root = this.node;
    root.replaceChildren();
    root.dataset.phase = state.phase;

    const header = el('div', 'tl-Panel-header');
    header.append(el('h2', 'tl-Panel-title', trans.__('TileLab')));
    header.append(el('div', 'tl-Panel-notebook', state.notebook ?? trans.__('No notebook')));
    root.append(header);

    const status = this._statusText(state);
    if (status !== null) {
      root.append(el('div', 'tl-Panel-status', status));
    }
    if (state.phase === 'not-loaded' || state.phase === 'incompatible') {
      const retry = el('button', 'tl-Panel-retry jp-Button jp-mod-styled jp-mod-accept', trans.__('Retry'));
      retry.addEventListener('click', () => this.model.retry());
      root.append(retry);
    }
    if (state.problem !== null) {
      root.append(el('div', 'tl-Panel-problem', state.problem));
    }
    if (state.phase === 'ready') {
      root.append(this._section(trans.__('Compiled kernels'), state.records, r => this._recordRow(r)));
      root.append(this._section(trans.__('Tuning runs'), state.tuning, t => this._tuningRow(t)));
    }
  }

  private _statusText(state: IPanelState): string | null {
    const trans = this._trans;
    switch (state.phase) {
      case 'no-notebook':
        return trans.__('Open a notebook to see its TileLab kernels.');
      case 'no-kernel':
        return trans.__('This notebook has no running kernel.');
      case 'connecting':
        return trans.__('Connecting to the kernel…');
      case 'not-loaded':
        return trans.__(
          'TileLab is not loaded in this kernel. Run %load_ext tilelab in a cell; the panel connects when the cell finishes.'
        );
      case 'incompatible':
        return trans.__('The kernel runs a TileLab that speaks another panel protocol. Install the same version in both.');
      case 'ready':
        return state.records.length === 0 && state.tuning.length === 0
          ? trans.__('No kernels compiled yet in this kernel (TileLab %1).', state.kernelVersion ?? '?')
          : null;
    }
  }

  private _section<T>(title: string, items: T[], row: (item: T) => HTMLElement): HTMLElement {
    const section = el('section', 'tl-Panel-section');
    section.append(el('h3', 'tl-Panel-sectionTitle', `${title} (${items.length})`));
    const list = el('ul', 'tl-Panel-list');
    for (const item of [...items].reverse()) {
      list.append(row(item));
    }
    section.append(list);
    return section;
  }

  private _recordRow(record: IRecordSummary): HTMLElement {
    const trans = this._trans;
    const failed = record.status !== 'ok';
    const row = this._row('record', record.id, record.name, failed);
    const mode = record.mode === 'lowered' ? trans.__('lowered only') : trans.__('compiled');
    const facts = [
      record.arch,
      failed ? trans.__('failed') : mode,
      trans.__('%1 passes', record.passes),
      trans.__('%1 s', record.compile_s.toFixed(2))
    ];
    if (record.best_latency_ms !== null && record.best_latency_ms !== undefined) {
      facts.push(trans.__('best %1 ms', formatNumber(record.best_latency_ms)));
    }
    if (record.from_cache) {
      facts.push(trans.__('cached'));
    }
    row.append(el('div', 'tl-Panel-facts', facts.join(' · ')));
    row.title = record.target;
    if (record.error !== null && record.error !== undefined) {
      row.append(el('div', 'tl-Panel-error', record.error));
    }
    return row;
  }

  private _tuningRow(run: ITuningSummary): HTMLElement {
    const trans = this._trans;
    const running = run.running === true;
    const row = this._row('tuning', run.id, run.name ?? run.id, false);
    const facts = [running ? trans.__('running') : run.partial ? trans.__('stopped early') : trans.__('done')];
    if (typeof run.total === 'number') {
      facts.push(trans.__('%1 / %2 configs', run.done ?? 0, run.total));
    }
    if (run.failed) {
      facts.push(trans.__('%1 failed', run.failed));
    }
    if (typeof run.best_latency_ms === 'number') {
      facts.push(trans.__('best %1 ms', formatNumber(run.best_latency_ms)));
    }
    row.append(el('div', 'tl-Panel-facts', facts.join(' · ')));
    if (running && typeof run.total === 'number' && run.total > 0) {
      const bar = el('progress', 'tl-Panel-progress') as HTMLProgressElement;
      bar.max = run.total;
      bar.value = run.done ?? 0;
      row.append(bar);
    }
    if (!running && run.best_config) {
      const config = Object.entries(run.best_config)
        .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
        .join(', ');
      row.append(el('div', 'tl-Panel-config', config));
    }
    return row;
  }

  private _row(kind: ItemKind, id: string, name: string, failed: boolean): HTMLElement {
    const row = el('li', `tl-Panel-item tl-Panel-${kind}`);
    row.dataset.id = id;
    if (failed) {
      row.classList.add('tl-mod-failed');
    }
    row.tabIndex = 0;
    row.append(el('div', 'tl-Panel-name', name));
    const open = () => {
      void this.open(kind, id).catch((error: Error) => {
        this.node.querySelector('.tl-Panel-problem')?.remove();
        this.node.append(el('div', 'tl-Panel-problem', this._trans.__('Could not open it: %1', error.message)));
      });
    };
    row.addEventListener('click', open);
    row.addEventListener('keydown', event => {
      if (event.key === 'Enter') {
        open();
      }
    });
    return row;
  }

  private _itemTitle(reply: IItemReply): string {
    if (reply.kind === 'record') {
      const record = reply.summary as IRecordSummary;
      return this._trans.__('%1 · %2', record.name, record.arch);
    }
    const run = reply.summary as ITuningSummary;
    return this._trans.__('Tuning · %1', run.name ?? run.id);
  }

  private _trans: TranslationBundle;
  private _show: (widget: Widget) => void;
  private _snapshots = new Map<string, MainAreaWidget<SnapshotView>>();
}

/** A static HTML snapshot in a sandboxed iframe (no scripts, no same-origin). */
export class SnapshotView extends Widget {
  constructor() {
    super();
    this.addClass('tl-Snapshot');
    this._frame = document.createElement('iframe');
    this._frame.setAttribute('sandbox', '');
    this._frame.setAttribute('referrerpolicy', 'no-referrer');
    this._frame.className = 'tl-Snapshot-frame';
    this.node.append(this._frame);
  }

  /** Show `html`, or `fallback` as text when there is none. */
  setSnapshot(html: string | null, fallback: string): void {
    if (html === null) {
      this._frame.removeAttribute('srcdoc');
      this.node.dataset.empty = 'true';
      this.node.replaceChildren(this._frame, el('div', 'tl-Snapshot-empty', fallback));
      return;
    }
    delete this.node.dataset.empty;
    this.node.replaceChildren(this._frame);
    this._frame.srcdoc = html;
  }

  private _frame: HTMLIFrameElement;
}

function el(tag: string, className: string, text?: string): HTMLElement {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

function formatNumber(value: number): string {
  return value >= 100 ? value.toFixed(1) : value.toPrecision(3);
}
