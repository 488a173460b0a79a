/**
 * The Layouts tab's small controls: a labelled field, a numbered picker
 * (replica, tile) and a segmented choice (colour by, label by).
 */

import { button, h } from './dom';

/** The class of the tab's buttons. */
export const BUTTON = 'tl-lay-button';

/** `control` after a small label. */
export function labelled(text: string, control: HTMLElement): HTMLElement {
  const label = h('label', 'tl-lay-field');
  label.append(h('span', 'tl-lay-label', text), control);
  return label;
}

/** A select of 0 … `count` - 1 showing `value`; `change` gets the number picked. */
export function picker(className: string, count: number, value: number, change: (value: number) => void): HTMLElement {
  const select = h('select', className);
  for (let index = 0; index < count; index++) {
    const option = h('option', '', String(index));
    option.value = String(index);
    select.append(option);
  }
  select.value = String(value);
  select.addEventListener('change', () => change(Number(select.value)));
  return select;
}

/** A radio group of buttons, one per mode, `current` on; `change` gets the mode picked. */
export function segmented(title: string, modes: string[], current: string, change: (mode: string) => void): HTMLElement {
  const group = h('span', 'tl-lay-segmented');
  group.setAttribute('role', 'radiogroup');
  group.setAttribute('aria-label', title);
  group.append(h('span', 'tl-lay-label', title));
  for (const mode of modes) {
    const choice = button(
      mode,
      `${title}: ${mode}`,
      () => {
        for (const other of group.querySelectorAll('button')) {
          other.classList.toggle('tl-mod-active', other === choice);
          other.setAttribute('aria-checked', String(other === choice));
        }
        change(mode);
      },
      BUTTON
    );
    choice.setAttribute('role', 'radio');
    choice.classList.toggle('tl-mod-active', mode === current);
    choice.setAttribute('aria-checked', String(mode === current));
    group.append(choice);
  }
  return group;
}
