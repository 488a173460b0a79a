/**
 * Notebook behaviours of the extension: links from a TileLab view to a line of
 * the cell that made it, and a just-opened notebook kept clean.
 *
 * A view (the Explorer's Overview of a failed compile: "this cell, line 17")
 * sends a `tilelab:reveal-line` DOM event with `detail.line`, the editor's line
 * number; it bubbles to the notebook, which selects that line in the editor of
 * the cell holding the view. The view needs no JupyterLab API to do it.
 */

import type { NotebookPanel } from '@jupyterlab/notebook';
import { JSONExt, PartialJSONValue } from '@lumino/coreutils';

export const REVEAL_LINE = 'tilelab:reveal-line';

/** Follow the `tilelab:reveal-line` events raised inside `panel`'s outputs. */
export function followLineLinks(panel: NotebookPanel): void {
  const onReveal = (event: Event): void => {
    const line = Number((event as CustomEvent<{ line?: unknown }>).detail?.line);
    const target = event.target;
    if (!Number.isInteger(line) || line < 1 || !(target instanceof Node)) {
      return;
    }
    const notebook = panel.content;
    const index = notebook.widgets.findIndex(cell => cell.node.contains(target));
    const cell = index < 0 ? null : notebook.widgets[index];
    const editor = cell?.editor ?? null;
    const text = editor?.getLine(line - 1);
    if (cell === null || editor === null || text === undefined) {
      return;
    }
    event.stopPropagation();
    notebook.activeCellIndex = index;
    notebook.mode = 'edit';
    const start = { line: line - 1, column: 0 };
    editor.setSelection({ start, end: { line: line - 1, column: text.length } });
    editor.revealPosition(start);
    editor.focus();
  };
  panel.node.addEventListener(REVEAL_LINE, onReveal);
  panel.disposed.connect(() => panel.node.removeEventListener(REVEAL_LINE, onReveal));
}

/**
 * A notebook just opened is not "modified" by JupyterLab writing the running kernel's name and
 * Python version into its metadata (`kernelspec`, `language_info`): the shipped notebooks were run
 * elsewhere, so every reader's kernel differs a little. Until the first real change (or a save),
 * such a change alone leaves the notebook clean.
 */
export function keepOpenedClean(panel: NotebookPanel): void {
  const context = panel.context;
  void context.ready.then(() => {
    const model = context.model;
    if (model.dirty) {
      return;
    }
    const loaded = withoutKernelInfo(model.toJSON());
    const stop = (): void => {
      model.stateChanged.disconnect(onState);
      context.saveState.disconnect(stop);
    };
    const onState = (_: unknown, change: { name: string; newValue: unknown }): void => {
      if (change.name !== 'dirty' || change.newValue !== true) {
        return;
      }
      if (JSONExt.deepEqual(withoutKernelInfo(model.toJSON()), loaded)) {
        model.dirty = false;
      } else {
        stop(); // a real change: from now on JupyterLab's own rule
      }
    };
    model.stateChanged.connect(onState);
    context.saveState.connect(stop);
  });
}

function withoutKernelInfo(notebook: PartialJSONValue): PartialJSONValue {
  const copy = JSONExt.deepCopy(notebook) as { metadata?: Record<string, unknown> };
  delete copy.metadata?.kernelspec;
  delete copy.metadata?.language_info;
  return copy as PartialJSONValue;
}
