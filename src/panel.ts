/**
 * The TileLab side panel: the active kernel's compiled kernels, grouped into
 * runs, and its tuning runs. Selecting one opens it in a main-area tab (see
 * `tabs.ts`): live when the kernel can give a live view, else its snapshot.
 * Everything the kernel sends is shown as text.
 */

import { MainAreaWidget } from '@jupyterlab/apputils';
import type { INotebookTracker } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';
import { LabIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { TileLabModel } from './model';
import { IPanelState } from './panel_state';
import type { IRecordSummary, ITuningSummary, ItemKind } from './protocol';
import { LiveView, SnapshotView, WIDGET_MIME } from './tabs';
import { activates, h } from './widgets/dom';

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

type Tab = MainAreaWidget<LiveView | SnapshotView>;

/** The right-side panel: the active kernel's compiled kernels (grouped into runs) and tuning runs. */
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
    for (const tab of this._tabs.values()) {
      tab.dispose();
    }
    this._tabs.clear();
    super.dispose();
  }

  /** Open an item in a main-area tab: its live view when the kernel can give one, else its snapshot. */
  async open(kind: ItemKind, id: string): Promise<void> {
    const notebook = this.model.notebook;
    const rendermime = notebook?.content.rendermime ?? null;
    if (notebook !== null && rendermime !== null && rendermime.mimeTypes.includes(WIDGET_MIME)) {
      const view = await this.model.requestView(kind, id);
      if (view.bundle !== null) {
        const tab = this._tab(kind, id, 'live');
        tab.title.label = this._itemTitle(kind, view.summary);
        await (tab.content as LiveView).render(notebook, view.bundle);
        this._show(tab);
        return;
      }
    }
    const reply = await this.model.requestItem(kind, id, true);
    const tab = this._tab(kind, id, 'snapshot');
    tab.title.label = this._itemTitle(kind, reply.summary);
    (tab.content as SnapshotView).setSnapshot(
      reply.html ?? null,
      this._trans.__('The kernel sent no snapshot for this item.')
    );
    this._show(tab);
  }

  /** The tab of `kind:id` showing `mode` (a tab of the other mode is replaced). */
  private _tab(kind: ItemKind, id: string, mode: 'live' | 'snapshot'): Tab {
    const key = `${kind}:${id}`;
    let tab = this._tabs.get(key);
    const fits = tab !== undefined && !tab.isDisposed && tab.content instanceof (mode === 'live' ? LiveView : SnapshotView);
    if (!fits) {
      tab?.dispose();
      const content = mode === 'live' ? new LiveView(this._trans) : new SnapshotView();
      tab = new MainAreaWidget<LiveView | SnapshotView>({ content });
      tab.id = `tilelab-${kind}-${id}`;
      tab.title.icon = tilelabIcon;
      tab.title.closable = true;
      tab.node.dataset.mode = mode;
      this._tabs.set(key, tab);
    }
    return tab!;
  }

  private _render(): void {
    const state = this.model.state;
    const trans = this._trans;
    const root = this.node;
    root.replaceChildren();
    root.dataset.phase = state.phase;

    const header = h('div', 'tl-Panel-header');
    const titleRow = h('div', 'tl-Panel-titleRow');
    titleRow.append(h('h2', 'tl-Panel-title', trans.__('TileLab')));
    if (state.phase === 'ready' && (state.records.length > 0 || state.tuning.length > 0)) {
      const clear = h('button', 'tl-Panel-clear jp-Button jp-mod-styled jp-mod-reject', trans.__('Clear'));
      clear.title = trans.__("Forget this kernel's compiled kernels and tuning runs (the notebook's variables stay)");
      clear.addEventListener('click', () => this.model.clear());
      titleRow.append(clear);
    }
    header.append(titleRow, h('div', 'tl-Panel-notebook', state.notebook ?? trans.__('No notebook')));
    root.append(header);

    const status = this._statusText(state);
    if (status !== null) {
      root.append(h('div', 'tl-Panel-status', status));
    }
    if (state.phase === 'not-loaded' || state.phase === 'incompatible') {
      const retry = h('button', 'tl-Panel-retry jp-Button jp-mod-styled jp-mod-accept', trans.__('Retry'));
      retry.addEventListener('click', () => this.model.retry());
      root.append(retry);
    }
    if (state.problem !== null) {
      root.append(h('div', 'tl-Panel-problem', state.problem));
    }
    if (state.phase === 'ready') {
      root.append(this._kernels(state.records));
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

  /** Compiled kernels, one group per kernel name (the most recently compiled first), its runs newest first. */
  private _kernels(records: IRecordSummary[]): HTMLElement {
    const groups = new Map<string, IRecordSummary[]>();
    for (const record of [...records].sort((a, b) => b.created - a.created)) {
      groups.set(record.name, [...(groups.get(record.name) ?? []), record]);
    }
    const section = h('section', 'tl-Panel-section');
    section.append(h('h3', 'tl-Panel-sectionTitle', this._trans.__('Compiled kernels (%1)', groups.size)));
    const list = h('ul', 'tl-Panel-list');
    for (const [name, runs] of groups) {
      list.append(this._group(name, runs));
    }
    section.append(list);
    return section;
  }

  /** One kernel's runs: the current one and every run that compiled; failed attempts folded away. */
  private _group(name: string, runs: IRecordSummary[]): HTMLElement {
    const trans = this._trans;
    const group = h('li', 'tl-Panel-group');
    group.dataset.name = name;
    const head = h('div', 'tl-Panel-groupHead');
    head.append(h('span', 'tl-Panel-name', name));
    head.append(h('span', 'tl-Panel-count', trans._n('%1 run', '%1 runs', runs.length)));
    group.append(head);
    const shown = h('ul', 'tl-Panel-runs');
    const failed = runs.filter(run => run.status !== 'ok' && !run.current);
    for (const run of runs) {
      if (!failed.includes(run)) {
        shown.append(this._runRow(run));
      }
    }
    group.append(shown);
    if (failed.length > 0) {
      const folded = h('details', 'tl-Panel-failed');
      folded.append(h('summary', 'tl-Panel-failedSummary', trans._n('%1 failed attempt', '%1 failed attempts', failed.length)));
      const list = h('ul', 'tl-Panel-runs');
      failed.forEach(run => list.append(this._runRow(run)));
      folded.append(list);
      group.append(folded);
    }
    return group;
  }

  private _runRow(record: IRecordSummary): HTMLElement {
    const trans = this._trans;
    const failed = record.status !== 'ok';
    const row = this._row('record', record.id, trans.__('run %1', record.run), failed);
    if (record.current) {
      row.classList.add('tl-mod-current');
      const badge = h('span', 'tl-Panel-current', trans.__('current'));
      badge.title = trans.__('The newest run of %1', record.name);
      row.querySelector('.tl-Panel-rowHead')?.append(badge);
    }
    const mode = record.mode === 'lowered' ? trans.__('lowered only') : trans.__('compiled');
    const facts = [
      formatTime(record.created),
      record.arch,
      failed ? trans.__('failed') : mode,
      trans.__('%1 passes', record.passes),
      trans.__('%1 s', record.compile_s.toFixed(2))
    ];
    if (record.best_latency_ms !== null && record.best_latency_ms !== undefined) {
      // Not this run's timing: the best of a finished sweep of the same kernel (a lowered run has none).
      facts.push(trans.__('tuned best %1 ms', formatNumber(record.best_latency_ms)));
    }
    if (record.from_cache) {
      facts.push(trans.__('cached'));
    }
    row.append(h('div', 'tl-Panel-facts', facts.filter(Boolean).join(' · ')));
    row.title = record.target;
    if (record.error !== null && record.error !== undefined) {
      row.append(h('div', 'tl-Panel-error', record.error));
    }
    return row;
  }

  private _section<T>(title: string, items: T[], row: (item: T) => HTMLElement): HTMLElement {
    const section = h('section', 'tl-Panel-section');
    section.append(h('h3', 'tl-Panel-sectionTitle', `${title} (${items.length})`));
    const list = h('ul', 'tl-Panel-list');
    for (const item of [...items].reverse()) {
      list.append(row(item));
    }
    section.append(list);
    return section;
  }

  private _tuningRow(run: ITuningSummary): HTMLElement {
    const trans = this._trans;
    const running = run.running === true;
    const row = this._row('tuning', run.id, run.name ?? run.id, false);
    const started = (run.done ?? 0) > 0;
    const state = running
      ? trans.__('running')
      : run.partial
        ? trans.__('stopped early')
        : started || run.total === 0
          ? trans.__('done')
          : trans.__('not started');
    const facts = [state];
    if (typeof run.total === 'number') {
      facts.push(trans.__('%1 / %2 configs', run.done ?? 0, run.total));
    }
    if (run.failed) {
      facts.push(trans.__('%1 failed', run.failed));
    }
    if (typeof run.best_latency_ms === 'number') {
      facts.push(trans.__('best %1 ms', formatNumber(run.best_latency_ms)));
    }
    if (typeof run.detail === 'string' && run.detail) {
      const detail = h('div', 'tl-Panel-detail', run.detail);
      detail.title = run.detail;
      row.append(detail);
    }
    row.append(h('div', 'tl-Panel-facts', facts.join(' · ')));
    if (running && typeof run.total === 'number' && run.total > 0) {
      const bar = h('progress', 'tl-Panel-progress') as HTMLProgressElement;
      bar.max = run.total;
      bar.value = run.done ?? 0;
      row.append(bar);
    }
    if (!running && run.best_config) {
      const config = Object.entries(run.best_config)
        .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
        .join(', ');
      row.append(h('div', 'tl-Panel-config', config));
    }
    return row;
  }

  private _row(kind: ItemKind, id: string, name: string, failed: boolean): HTMLElement {
    const row = h('li', `tl-Panel-item tl-Panel-${kind}`);
    row.dataset.id = id;
    if (failed) {
      row.classList.add('tl-mod-failed');
    }
    const head = h('div', 'tl-Panel-rowHead');
    head.append(h('span', kind === 'record' ? 'tl-Panel-run' : 'tl-Panel-name', name));
    row.append(head);
    activates(row, () => {
      void this.open(kind, id).catch((error: Error) => {
        this.node.querySelector('.tl-Panel-problem')?.remove();
        this.node.append(h('div', 'tl-Panel-problem', this._trans.__('Could not open it: %1', error.message)));
      });
    });
    return row;
  }

  private _itemTitle(kind: ItemKind, summary: IRecordSummary | ITuningSummary): string {
    if (kind === 'record') {
      const record = summary as IRecordSummary;
      return this._trans.__('%1 · %2 · run %3', record.name, record.arch, record.run);
    }
    const run = summary as ITuningSummary;
    return this._trans.__('Tuning · %1', run.name ?? run.id);
  }

  private _trans: TranslationBundle;
  private _show: (widget: Widget) => void;
  private _tabs = new Map<string, Tab>();
}

function formatNumber(value: number): string {
  return value >= 100 ? value.toFixed(1) : value.toPrecision(3);
}

/** A compile's time of day (its date too when not today). */
function formatTime(seconds: number): string {
  if (!seconds) {
    return '';
  }
  const when = new Date(seconds * 1000);
  const today = new Date().toDateString() === when.toDateString();
  return today ? when.toLocaleTimeString() : when.toLocaleString();
}
