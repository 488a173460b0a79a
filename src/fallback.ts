/**
 * A TileLab view in a notebook output: its live widget while the kernel that
 * made it runs, else the static snapshot saved beside it.
 *
 * Every TileLab view's mime bundle carries the widget (`widget-view+json`),
 * its script-free `text/html` snapshot and `application/vnd.tilelab.view+json`
 * (`model_id` and `session`, the id of the kernel session that made the
 * widget). JupyterLab trusts a notebook it saved itself and would pick the
 * widget, whose model died with its kernel: a reopened notebook then says
 * "Error displaying widget: model not found" in every Explorer. This renderer
 * ranks above the widget's: it shows the widget only while the notebook's
 * kernel is the session that made it (known from the `header.session` of the
 * kernel's own iopub messages) and the snapshot otherwise, switching when the
 * kernel restarts or a reloaded page first hears from a kernel that still
 * holds the widget.
 */

import type { NotebookPanel } from '@jupyterlab/notebook';
import type { KernelMessage } from '@jupyterlab/services';
import type { JSONObject } from '@lumino/coreutils';
import { ISignal, Signal } from '@lumino/signaling';
import { Panel } from '@lumino/widgets';

import { WIDGET_MIME } from './tabs';

export const VIEW_MIME = 'application/vnd.tilelab.view+json';
/** Above the widget manager's renderer (rank -10): a lower rank is preferred. */
const RANK = -20;

type Registry = NotebookPanel['content']['rendermime'];
type Factory = Parameters<Registry['addFactory']>[0];
type Renderer = ReturnType<Factory['createRenderer']>;
type MimeModel = Parameters<Renderer['renderModel']>[0];

/** The id of the kernel session a notebook is talking to now (null until the kernel has said something). */
class KernelSession {
  constructor(panel: NotebookPanel) {
    const context = panel.sessionContext;
    context.iopubMessage.connect(this._onMessage, this);
    context.kernelChanged.connect(() => this._set(null), this);
    context.statusChanged.connect((_, status) => {
      if (status === 'restarting' || status === 'autorestarting' || status === 'dead') {
        this._set(null);
      }
    }, this);
    panel.disposed.connect(() => Signal.clearData(this));
  }

  get id(): string | null {
    return this._id;
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  private _onMessage(_: unknown, message: KernelMessage.IMessage): void {
    const session = message.header.session;
    if (typeof session === 'string' && session !== '') {
      this._set(session);
    }
  }

  private _set(id: string | null): void {
    if (id !== this._id) {
      this._id = id;
      this._changed.emit();
    }
  }

  private _id: string | null = null;
  private _changed = new Signal<this, void>(this);
}

/** Renders a TileLab view's output: the live widget or its snapshot (see the module comment). */
class ViewRenderer extends Panel implements Renderer {
  constructor(rendermime: Registry, session: KernelSession) {
    super();
    this.addClass('tl-View');
    this._rendermime = rendermime;
    this._session = session;
    session.changed.connect(() => void this._update(), this);
  }

  async renderModel(model: MimeModel): Promise<void> {
    this._model = model; // an updated display (a finished sweep) redraws only what changed: see _update
    await this._update();
  }

  dispose(): void {
    Signal.disconnectReceiver(this);
    super.dispose();
  }

  private async _update(): Promise<void> {
    const model = this._model;
    if (model === null || this.isDisposed) {
      return;
    }
    const info = (model.data[VIEW_MIME] ?? {}) as JSONObject;
    const made = typeof info.session === 'string' ? info.session : null;
    const live = model.data[WIDGET_MIME] !== undefined && (made === null || made === this._session.id);
    const want: 'live' | 'snapshot' = live ? 'live' : 'snapshot';
    // The same widget stays drawn (it updates itself); a snapshot is drawn again when its HTML changed.
    const key = want === 'live' ? `live:${String(info.model_id ?? '')}` : `snapshot:${String(model.data['text/html'] ?? '')}`;
    if (key === this._shown) {
      return;
    }
    this._shown = key;
    const mime = want === 'live' ? WIDGET_MIME : 'text/html';
    const data = want === 'live' ? model.data : { 'text/html': model.data['text/html'] ?? '' };
    const renderer = this._rendermime.createRenderer(mime);
    for (const child of [...this.widgets]) {
      child.dispose();
    }
    this.addWidget(renderer);
    this.node.dataset.shown = want;
    await renderer.renderModel({ data, metadata: model.metadata, trusted: model.trusted, setData: () => undefined });
  }

  private _rendermime: Registry;
  private _session: KernelSession;
  private _model: MimeModel | null = null;
  private _shown: string | null = null; // what is drawn: 'live:<model id>' or 'snapshot:<html>'
}

/** Give `panel`'s outputs the renderer above (before its file is read: no saved output is drawn first). */
export function useViewRenderer(panel: NotebookPanel): void {
  const session = new KernelSession(panel);
  const rendermime = panel.content.rendermime;
  const factory: Factory = {
    safe: false, // like the widget's: an untrusted notebook shows its sanitised text/html
    mimeTypes: [VIEW_MIME],
    defaultRank: RANK,
    createRenderer: () => new ViewRenderer(rendermime, session)
  };
  rendermime.addFactory(factory, RANK);
}
