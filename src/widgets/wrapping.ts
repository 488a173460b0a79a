/**
 * Line wrapping that keeps a line's indentation: a wrapped line continues two
 * columns right of where its text starts, not at the left edge, so a long
 * `T.Buffer(...)` in a narrow side of a split diff still reads as one
 * statement of its block. CodeMirror wraps to column 0; a line decoration of
 * padding-left with a negative text-indent moves the continuation only
 * (the approach of codemirror/dev#384).
 */

import { Extension, RangeSetBuilder } from '@codemirror/state';
import { Decoration, DecorationSet, EditorView, ViewPlugin, ViewUpdate } from '@codemirror/view';

const HANG = 2; // extra columns for the continuation of a wrapped line
const MOST = 24; // deeper indentation still hangs at this column: a narrow pane keeps room for text
const BASE_PADDING = 6; // px: CodeMirror's own left padding of a line

const cache = new Map<number, Decoration>();

function hangAt(columns: number): Decoration {
  let decoration = cache.get(columns);
  if (decoration === undefined) {
    decoration = Decoration.line({
      attributes: { style: `padding-left: calc(${BASE_PADDING}px + ${columns}ch); text-indent: -${columns}ch` }
    });
    cache.set(columns, decoration);
  }
  return decoration;
}

/** The indentation of `text` in columns (a tab to the next multiple of `tabSize`). */
function indentColumns(text: string, tabSize: number): number {
  let columns = 0;
  for (const char of text) {
    if (char === ' ') {
      columns += 1;
    } else if (char === '\t') {
      columns += tabSize - (columns % tabSize);
    } else {
      break;
    }
  }
  return columns;
}

function decorations(view: EditorView): DecorationSet {
  const builder = new RangeSetBuilder<Decoration>();
  for (const { from, to } of view.visibleRanges) {
    for (let position = from; position <= to; ) {
      const line = view.state.doc.lineAt(position);
      builder.add(line.from, line.from, hangAt(hangColumns(line.text, view.state.tabSize)));
      position = line.to + 1;
    }
  }
  return builder.finish();
}

function hangColumns(text: string, tabSize: number): number {
  return Math.min(indentColumns(text, tabSize), MOST) + HANG;
}

/**
 * The lines a unified diff shows as removed are a widget's own DOM (no line decorations reach
 * them): they get the same hanging indent as they appear. CodeMirror ignores mutations inside widgets.
 */
function hangRemovedLines(view: EditorView): void {
  for (const line of view.contentDOM.querySelectorAll<HTMLElement>('.cm-deletedChunk > .cm-deletedLine:not([data-tl-hang])')) {
    const columns = hangColumns(line.textContent ?? '', view.state.tabSize);
    line.dataset.tlHang = String(columns);
    line.style.paddingLeft = `${columns}ch`;
    line.style.textIndent = `-${columns}ch`;
  }
}

const hangingIndent = ViewPlugin.fromClass(
  class {
    decorations: DecorationSet;
    private readonly _observer: MutationObserver;

    constructor(readonly view: EditorView) {
      this.decorations = decorations(view);
      this._observer = new MutationObserver(() => hangRemovedLines(view));
      this._observer.observe(view.contentDOM, { childList: true, subtree: true });
      hangRemovedLines(view);
    }

    update(update: ViewUpdate): void {
      if (update.docChanged || update.viewportChanged) {
        this.decorations = decorations(update.view);
      }
    }

    destroy(): void {
      this._observer.disconnect();
      for (const line of this.view.contentDOM.querySelectorAll<HTMLElement>('.cm-deletedLine[data-tl-hang]')) {
        delete line.dataset.tlHang;
        line.style.paddingLeft = line.style.textIndent = '';
      }
    }
  },
  { decorations: plugin => plugin.decorations }
);

/** Wrapping with hanging indentation (empty when `wrap` is false). */
export function wrapping(wrap: boolean): Extension {
  return wrap ? [EditorView.lineWrapping, hangingIndent] : [];
}
