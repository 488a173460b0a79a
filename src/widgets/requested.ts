/**
 * A tab filled once from its data dict: asked for when the tab is first shown, "loading…" until the
 * reply comes, the error in its place if the request fails. Overview and Profile are such tabs.
 */

import { Channel } from './channel';
import { h, message } from './dom';

export interface IRequestedTab {
  node: HTMLDivElement;
  dispose(): void;
}

export function requestedTab<T>(
  channel: Channel,
  request: string,
  className: string,
  fill: (node: HTMLDivElement, data: T) => void
): IRequestedTab {
  const node = h('div', className);
  message(node, 'loading…');
  channel
    .request<T>(request)
    .then(data => fill(node, data))
    .catch(error => message(node, (error as Error).message, 'error'));
  return { node, dispose: () => node.replaceChildren() };
}
