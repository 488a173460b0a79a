/**
 * A tab filled from its data dict: asked for when the tab is first shown, "loading…" until the reply
 * comes, the error in its place if the request fails. Overview and Profile are such tabs; both read the
 * record's machine code (resources, where the warps were), which the kernel may build in the background,
 * so the tab asks again when it arrives (`machine_updates`).
 */

import { Channel } from './channel';
import { h, message } from './dom';
import { IModel, watch } from './model';

export interface IRequestedTab {
  node: HTMLDivElement;
  dispose(): void;
}

export function requestedTab<T>(
  model: IModel,
  channel: Channel,
  request: string,
  className: string,
  fill: (node: HTMLDivElement, data: T) => void
): IRequestedTab {
  const node = h('div', className);
  message(node, 'loading…');
  const load = (): void => {
    channel
      .request<T>(request)
      .then(data => fill(node, data))
      .catch(error => message(node, (error as Error).message, 'error'));
  };
  load();
  const unwatch = watch(model, 'machine_updates', load);
  return {
    node,
    dispose: () => {
      unwatch();
      node.replaceChildren();
    }
  };
}
