/**
 * The main-area tabs the panel opens.
 *
 * `LiveView`: a record's live Explorer (or a tuning run's live view). The
 * kernel builds (or reuses) the widget and answers with its mime bundle, which
 * the notebook's own widget manager renders here. `SnapshotView`: the static
 * snapshot, only when no live view can be shown (no widget manager, no built
 * front-end), in an iframe with an empty `sandbox` attribute: no script in it
 * can run and it cannot reach this page.
 */

import type { NotebookPanel } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { JSONObject } from '@lumino/coreutils';
import { Panel, Widget } from '@lumino/widgets';

import { h } from './widgets/dom';

export const WIDGET_MIME = 'application/vnd.jupyter.widget-view+json';

/**
 * A live view (the Explorer, a tuning view) rendered by the widget manager of
 * the notebook whose kernel holds it. When that kernel restarts the widget is
 * gone, and the tab says so.
 */
export class LiveView extends Panel {
  constructor(trans: TranslationBundle) {
    super();
    this._trans = trans;
    this.addClass('tl-Live');
  }

  /** Render `bundle` with `notebook`'s widget manager (replacing what was shown). */
  async render(notebook: NotebookPanel, bundle: JSONObject): Promise<void> {
    this._watch(notebook);
    this._renderer?.dispose();
    this._notice?.remove();
    const renderer = notebook.content.rendermime.createRenderer(WIDGET_MIME);
    this._renderer = renderer;
    this.addWidget(renderer);
    await renderer.renderModel({ data: bundle, metadata: {}, trusted: true, setData: () => undefined });
    this.node.dataset.live = 'true';
  }

  dispose(): void {
    this._unwatch?.();
    super.dispose();
  }

  private _watch(notebook: NotebookPanel): void {
    this._unwatch?.();
    const context = notebook.sessionContext;
    const onStatus = (_: unknown, status: string) => {
      if (status === 'restarting' || status === 'autorestarting' || status === 'dead') {
        this._stale(this._trans.__('The kernel restarted: this view is no longer live. Open it again from the TileLab panel.'));
      }
    };
    const onKernel = () => this._stale(this._trans.__('The notebook changed kernels: this view is no longer live.'));
    context.statusChanged.connect(onStatus);
    context.kernelChanged.connect(onKernel);
    this._unwatch = () => {
      context.statusChanged.disconnect(onStatus);
      context.kernelChanged.disconnect(onKernel);
    };
  }

  private _stale(text: string): void {
    this._renderer?.dispose();
    this._renderer = null;
    this.node.dataset.live = 'false';
    this._notice?.remove();
    this._notice = h('div', 'tl-Live-stale', text);
    this.node.append(this._notice);
  }

  private _trans: TranslationBundle;
  private _renderer: Widget | null = null;
  private _notice: HTMLElement | null = null;
  private _unwatch: (() => void) | null = null;
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
      this.node.replaceChildren(this._frame, h('div', 'tl-Snapshot-empty', fallback));
      return;
    }
    delete this.node.dataset.empty;
    this.node.replaceChildren(this._frame);
    this._frame.srcdoc = html;
  }

  private _frame: HTMLIFrameElement;
}

