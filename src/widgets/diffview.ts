/**
 * Diffs with @codemirror/merge: side by side (synchronised scrolling, both
 * sides always visible, long lines wrap or scroll inside their side) or
 * unified, unchanged stretches collapsed. The changed ranges come from the
 * kernel (`changes`: `[fromA, toA, fromB, toB]`), so "ignore whitespace" means
 * what Python's diff says it means.
 */

import { Change, MergeView, unifiedMergeView } from '@codemirror/merge';
import { EditorState } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { SearchQuery } from '@codemirror/search';
import { Editing, markMatches, matchMarks, showMatches } from './codepane';
import { copyButton, h, keepKeys } from './dom';

export type DiffMode = 'split' | 'unified';

/** One diff as views/_diffdata.py shapes it, for Passes and Compare alike. */
export interface IDiffData {
  before: string;
  after: string;
  changes: number[][];
  /** The unified diff's hunks `[oldStart, newStart, kinds]` (the snapshot draws them). */
  hunks: [number, number, string][];
  added: number;
  removed: number;
}

export interface IDiffOptions {
  mode: DiffMode;
  before: string;
  after: string;
  changes: number[][];
  language: string;
  titles: [string, string];
  wrap: boolean;
}

const COLLAPSE = { margin: 3, minSize: 6 };

/** Two sides of at least 400 px (a TIR statement, indented, reads on one or two lines) and the gap between. */
export const SPLIT_MIN_WIDTH = 2 * 400 + 24;

/** Whether `detail` (the box a diff fills) has room for side by side; hidden (0 wide), it is given the benefit of the doubt. */
export function splitFits(detail: HTMLElement): boolean {
  const width = detail.clientWidth;
  return width === 0 || width >= SPLIT_MIN_WIDTH;
}

/** The mode to draw: side by side asked for where it has no room becomes unified, and `note` says why (not the
 * view's width: the note stays while the view is resized, and it is drawn again only when the mode changes). */
export function fittedMode(asked: DiffMode, detail: HTMLElement): { mode: DiffMode; note: string } {
  if (asked !== 'split' || splitFits(detail)) {
    return { mode: asked, note: '' };
  }
  return { mode: 'unified', note: ` · shown unified: side by side needs ${SPLIT_MIN_WIDTH} px` };
}

export class DiffView {
  readonly node: HTMLDivElement;

  constructor(options: IDiffOptions) {
    this.node = h('div', `tl-diff tl-diff-${options.mode}`);
    keepKeys(this.node);
    const changes = options.changes.map(([fromA, toA, fromB, toB]) => new Change(fromA, toA, fromB, toB));
    // The kernel's diff of exactly these two texts; anything else (never expected) gets none.
    const override = (a: string, b: string): readonly Change[] =>
      a === options.before && b === options.after ? changes : [];
    const common = (): any[] => [...this._editing.extensions(options.wrap, false), matchMarks];
    if (options.mode === 'split') {
      const head = h('div', 'tl-diff-head');
      for (const [k, title] of options.titles.entries()) {
        const side = h('div', 'tl-diff-side-head');
        const text = k === 0 ? options.before : options.after;
        side.append(h('span', 'tl-pane-title', title), copyButton(() => text, title));
        head.appendChild(side);
      }
      const host = h('div', 'tl-diff-body');
      this.node.append(head, host);
      this._merge = new MergeView({
        parent: host,
        a: { doc: options.before, extensions: common() },
        b: { doc: options.after, extensions: common() },
        gutter: true,
        highlightChanges: true,
        collapseUnchanged: COLLAPSE,
        diffConfig: { override }
      });
    } else {
      const head = h('div', 'tl-diff-head tl-diff-head-unified');
      head.append(
        h('span', 'tl-pane-title', `${options.titles[0]} → ${options.titles[1]}`),
        copyButton(() => options.before, options.titles[0], 'Copy before'),
        copyButton(() => options.after, options.titles[1], 'Copy after')
      );
      const host = h('div', 'tl-diff-body');
      this.node.append(head, host);
      this._unified = new EditorView({
        parent: host,
        state: EditorState.create({
          doc: options.after,
          extensions: [
            ...common(),
            unifiedMergeView({
              original: options.before,
              mergeControls: false,
              gutter: true,
              highlightChanges: true,
              syntaxHighlightDeletions: true,
              collapseUnchanged: COLLAPSE,
              diffConfig: { override }
            })
          ]
        })
      });
    }
    this._editing.highlightLater(() => this.views(), options.language);
    this._unfollow = this._editing.followTheme(() => this.views());
  }

  /** The editors (one, or the two sides). */
  views(): EditorView[] {
    return this._merge ? [this._merge.a, this._merge.b] : this._unified ? [this._unified] : [];
  }

  /** The editor showing `side` ("a": before, "b": after); unified shows only "b" (with deletions inline). */
  view(side: 'a' | 'b'): EditorView {
    if (this._merge) {
      return side === 'a' ? this._merge.a : this._merge.b;
    }
    return this._unified!;
  }

  /** Mark the matches of `query` on `side` and scroll the first one at or after `line` to the middle. */
  search(query: string, side: 'a' | 'b', line: number | null, options: { regexp?: boolean; caseSensitive?: boolean }): void {
    const spec = new SearchQuery({ search: query, ...options });
    const target = this.view(side);
    for (const view of this.views()) {
      if (view !== target) {
        markMatches(view, spec);
      }
    }
    showMatches(target, spec, line, this._merge ? this._merge.dom : undefined);
  }

  setWrap(wrap: boolean): void {
    this._editing.setWrap(this.views(), wrap);
  }

  destroy(): void {
    this._unfollow();
    this._merge?.destroy();
    this._unified?.destroy();
    this.node.remove();
  }

  private _editing = new Editing();
  private _merge: MergeView | null = null;
  private _unified: EditorView | null = null;
  private _unfollow: () => void;
}
