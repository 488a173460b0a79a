/**
 * Requests to the kernel over anywidget custom messages: `{id, type, ...}` out,
 * `{id, type, ...}` or `{id, error}` back. Large texts travel this way, never
 * as synced state.
 */

import { IModel } from './model';

interface IPending {
  resolve: (reply: any) => void;
  reject: (error: Error) => void;
  timer: number;
}

const TIMEOUT_MS = 60_000;

export class Channel {
  constructor(model: IModel) {
    this._model = model;
    this._onMessage = this._onMessage.bind(this);
    model.on('msg:custom', this._onMessage);
  }

  /** Ask the kernel for `type` with `content`; resolves with its reply, rejects with its error line. */
  request<T = any>(type: string, content: Record<string, unknown> = {}): Promise<T> {
    const id = this._next++;
    return new Promise<T>((resolve, reject) => {
      const timer = window.setTimeout(() => {
        this._pending.delete(id);
        reject(new Error(`the kernel did not answer (is it still running?)`));
      }, TIMEOUT_MS);
      this._pending.set(id, { resolve, reject, timer });
      this._model.send({ ...content, id, type });
    });
  }

  dispose(): void {
    this._model.off('msg:custom', this._onMessage);
    for (const pending of this._pending.values()) {
      window.clearTimeout(pending.timer);
    }
    this._pending.clear();
  }

  private _onMessage(message: any): void {
    const pending = message && this._pending.get(message.id);
    if (!pending) {
      return;
    }
    this._pending.delete(message.id);
    window.clearTimeout(pending.timer);
    if (message.error) {
      pending.reject(new Error(String(message.error)));
    } else {
      pending.resolve(message);
    }
  }

  private _model: IModel;
  private _next = 1;
  private _pending = new Map<number, IPending>();
}
