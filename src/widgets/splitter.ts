/**
 * A drag handle between a list and the pane beside it (or below it, when the
 * view is narrow): it sets a CSS variable on the view's root.
 */

import { h } from './dom';

export class Splitter {
  readonly node: HTMLDivElement;

  constructor(root: HTMLElement, widthVar: string, heightVar: string) {
    this.node = h('div', 'tl-splitter');
    this.node.title = 'Drag to resize the list';
    this.node.setAttribute('role', 'separator');
    this.node.addEventListener('pointerdown', event => {
      const list = this.node.previousElementSibling as HTMLElement | null;
      if (!list) {
        return;
      }
      event.preventDefault();
      this.node.setPointerCapture(event.pointerId);
      const box = list.getBoundingClientRect();
      const move = (moved: PointerEvent): void => {
        if (root.classList.contains('tl-narrow')) {
          root.style.setProperty(heightVar, `${Math.max(80, Math.min(600, moved.clientY - box.top))}px`);
        } else {
          const limit = root.getBoundingClientRect().width * 0.6;
          root.style.setProperty(widthVar, `${Math.max(160, Math.min(limit, moved.clientX - box.left))}px`);
        }
      };
      const stop = (): void => {
        this.node.removeEventListener('pointermove', move);
        this.node.removeEventListener('pointerup', stop);
      };
      this.node.addEventListener('pointermove', move);
      this.node.addEventListener('pointerup', stop);
    });
  }
}
