/**
 * Small DOM helpers shared by the TileLab views. User text goes in through
 * `textContent` only: no view takes markup from the kernel.
 */

/** An element with an optional class and text. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string | number | null
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined && text !== null) {
    node.textContent = String(text);
  }
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element with an optional class, its attributes and text (set as text, like `h`). */
export function svg(tag: string, className: string, attributes: Record<string, string | number>, text?: string): SVGElement {
  const node = document.createElementNS(SVG_NS, tag);
  if (className) {
    node.setAttribute('class', className);
  }
  for (const [name, value] of Object.entries(attributes)) {
    node.setAttribute(name, String(value));
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** A button with a tooltip. */
export function button(label: string, title: string, onClick: () => void, className = 'tl-btn'): HTMLButtonElement {
  const node = h('button', className, label);
  node.type = 'button';
  node.title = title;
  node.addEventListener('click', onClick);
  return node;
}

/** A labelled checkbox. */
export function checkbox(label: string, checked: boolean, onChange: (checked: boolean) => void): HTMLLabelElement {
  const box = h('input');
  box.type = 'checkbox';
  box.checked = checked;
  box.addEventListener('change', () => onChange(box.checked));
  const node = h('label', 'tl-check');
  node.append(box, h('span', '', label));
  return node;
}

async function writeClipboard(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    return;
  } catch {
    // No clipboard permission (or an insecure page): fall back to a hidden textarea.
  }
  const area = h('textarea');
  area.value = text;
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  const copied = document.execCommand('copy');
  area.remove();
  if (!copied) {
    throw new Error('copy refused');
  }
}

/** A "Copy" button that copies `text()` and says so. */
export function copyButton(text: () => string, what: string, label = 'Copy'): HTMLButtonElement {
  const node = button(label, `Copy ${what} to the clipboard`, () => {
    writeClipboard(text())
      .then(() => {
        node.textContent = 'Copied';
        node.dataset.copied = 'true';
      })
      .catch(() => {
        node.textContent = 'Copy failed';
      })
      .finally(() => window.setTimeout(() => (node.textContent = label), 1500));
  });
  node.classList.add('tl-copy');
  return node;
}

/** Keys pressed inside `node` stay there: JupyterLab's shortcuts (and the notebook) never see them. */
export function keepKeys(node: HTMLElement): void {
  node.setAttribute('data-lm-suppress-shortcuts', 'true');
  node.addEventListener('keydown', event => event.stopPropagation());
}

/** A one-line message (hint or error) in `container`. */
export function message(container: HTMLElement, text: string, kind: 'hint' | 'error' = 'hint'): void {
  container.replaceChildren(h('p', kind === 'error' ? 'tl-error' : 'tl-hint', text));
}

/**
 * Call `callback(width)` when `node`'s content width changes, on the next animation frame: a
 * change made inside a ResizeObserver callback that resizes what it observes makes the browser
 * report "ResizeObserver loop completed with undelivered notifications" as a page error.
 * Returns the disconnect function.
 */
export function watchWidth(node: HTMLElement, callback: (width: number) => void): () => void {
  let frame = 0;
  let width = -1;
  const observer = new ResizeObserver(entries => {
    width = entries[entries.length - 1]?.contentRect.width ?? width;
    if (frame === 0) {
      frame = requestAnimationFrame(() => {
        frame = 0;
        callback(width);
      });
    }
  });
  observer.observe(node);
  return () => {
    observer.disconnect();
    cancelAnimationFrame(frame);
  };
}

/** Make `node` act as a `role` control: focusable, and `act` runs on a click, Enter or (a button) Space. */
export function activates(node: HTMLElement, act: () => void, role: 'button' | 'link' = 'button'): void {
  node.setAttribute('role', role);
  node.tabIndex = 0;
  node.addEventListener('click', act);
  node.addEventListener('keydown', event => {
    if (event.key === 'Enter' || (role === 'button' && event.key === ' ')) {
      event.preventDefault();
      act();
    }
  });
}

/**
 * Make the `[data-tilelab-line]` marks in `container` (a cell line named in the kernel's HTML) links:
 * a click (or Enter) raises `tilelab:reveal-line`, which TileLab's JupyterLab extension answers by
 * selecting that line in the editor of the cell that holds this view.
 */
export function linkLines(container: HTMLElement): void {
  for (const mark of Array.from(container.querySelectorAll<HTMLElement>('[data-tilelab-line]'))) {
    mark.title = 'Select this line in the cell';
    activates(
      mark,
      () => {
        const line = Number(mark.dataset.tilelabLine);
        mark.dispatchEvent(new CustomEvent('tilelab:reveal-line', { bubbles: true, detail: { line } }));
      },
      'link'
    );
  }
}
