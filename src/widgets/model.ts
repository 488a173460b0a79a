/**
 * The part of anywidget's model and render contract the TileLab views use.
 */

export interface IModel {
  get(name: string): any;
  set(name: string, value: unknown): void;
  save_changes(): void;
  on(event: string, callback: (...args: any[]) => void): void;
  off(event?: string | null, callback?: ((...args: any[]) => void) | null): void;
  send(content: unknown, callbacks?: unknown, buffers?: ArrayBuffer[]): void;
}

export interface IRenderProps {
  model: IModel;
  el: HTMLElement;
}

/** Set a synced trait and send it to the kernel. */
export function save(model: IModel, name: string, value: unknown): void {
  model.set(name, value);
  model.save_changes();
}

/** Call `callback` on every change of trait `name`; returns the unsubscribe function. */
export function watch(model: IModel, name: string, callback: () => void): () => void {
  const event = `change:${name}`;
  model.on(event, callback);
  return () => model.off(event, callback);
}
