/**
 * One read-only CodeMirror pane for every code view (IR, CUDA, PTX, SASS, the
 * cell): line numbers, highlighting, folding, search (Ctrl+F inside the pane),
 * a copy button, and line marks for linked lines. Diffs build on the same
 * extensions (see `diffview.ts`).
 */

import { cppLanguage } from '@codemirror/lang-cpp';
import { pythonLanguage } from '@codemirror/lang-python';
import { codeFolding, foldGutter, foldKeymap } from '@codemirror/language';
import { SearchQuery, search, searchKeymap, setSearchQuery } from '@codemirror/search';
import { Compartment, EditorSelection, EditorState, Extension, RangeSetBuilder, StateEffect, StateField } from '@codemirror/state';
import {
  Decoration,
  DecorationSet,
  EditorView,
  GutterMarker,
  gutter,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers
} from '@codemirror/view';
import { copyButton, h, keepKeys } from './dom';
import { editorTheme, onThemeChange } from './theme';
import { wrapping } from './wrapping';

/** The languages panes know: TIR script reads as Python, CUDA as C++. */
export function languageOf(language: string): Extension {
  switch (language) {
    case 'python':
    case 'tir':
      return pythonLanguage;
    case 'cuda':
    case 'c':
    case 'cpp':
      return cppLanguage;
    default:
      return [];
  }
}

/**
 * What every pane and diff editor shares: read-only, line numbers, search, theme, wrapping, and
 * (panes only) folding. Highlighting is attached right after the first paint: a pass diff shows at
 * once and colours a moment later.
 */
export class Editing {
  readonly theme = new Compartment();
  readonly wrap = new Compartment();
  readonly language = new Compartment();

  extensions(wrap: boolean, folding: boolean): Extension[] {
    return [
      EditorState.readOnly.of(true),
      lineNumbers(),
      highlightActiveLineGutter(),
      highlightActiveLine(),
      folding ? [codeFolding(), foldGutter()] : [],
      search({ top: true }),
      keymap.of([...searchKeymap, ...foldKeymap]),
      this.language.of([]),
      this.theme.of(editorTheme()),
      this.wrap.of(wrapping(wrap))
    ];
  }

  /** Highlight `views` as `language` once the browser has painted them. */
  highlightLater(views: () => EditorView[], language: string): void {
    const extension = languageOf(language);
    const attach = (): void => {
      for (const view of views()) {
        if (view.dom.isConnected) {
          view.dispatch({ effects: this.language.reconfigure(extension) });
        }
      }
    };
    requestAnimationFrame(() => window.setTimeout(attach, 0));
  }

  /** Follow JupyterLab's light/dark switch in `views`; returns the disconnect function. */
  followTheme(views: () => EditorView[]): () => void {
    return onThemeChange(dark => {
      for (const view of views()) {
        view.dispatch({ effects: this.theme.reconfigure(editorTheme(dark)) });
      }
    });
  }

  setWrap(views: EditorView[], wrap: boolean): void {
    for (const view of views) {
      view.dispatch({ effects: this.wrap.reconfigure(wrapping(wrap)) });
    }
  }
}

/** Line marks: a tint per link group (its hue in `--tl-h`) and the selected lines (`tl-selected`). */
export interface ILineMarks {
  tints: Map<number, number>;
  selected: Set<number>;
}

const setMarks = StateEffect.define<ILineMarks>();

/** One hue per link group, twelve in a cycle, a golden angle apart so that neighbouring groups differ. */
function tintHue(tint: number): number {
  return Math.round(((tint % 12) * 137.5) % 360);
}

function decorate(state: EditorState, marks: ILineMarks): DecorationSet {
  const builder = new RangeSetBuilder<Decoration>();
  const last = state.doc.lines;
  const lines = new Set<number>([...marks.tints.keys(), ...marks.selected]);
  for (const line of [...lines].sort((a, b) => a - b)) {
    if (line < 1 || line > last) {
      continue;
    }
    const tint = marks.tints.get(line);
    const classes = [tint === undefined ? '' : 'tl-link', marks.selected.has(line) ? 'tl-selected' : ''].join(' ').trim();
    const attributes = tint === undefined ? undefined : { style: `--tl-h: ${tintHue(tint)}` };
    builder.add(state.doc.line(line).from, state.doc.line(line).from, Decoration.line({ class: classes, attributes }));
  }
  return builder.finish();
}

const marksField = StateField.define<{ marks: ILineMarks; set: DecorationSet }>({
  create: () => ({ marks: { tints: new Map(), selected: new Set() }, set: Decoration.none }),
  update(value, transaction) {
    for (const effect of transaction.effects) {
      if (effect.is(setMarks)) {
        return { marks: effect.value, set: decorate(transaction.state, effect.value) };
      }
    }
    return value;
  },
  provide: field => EditorView.decorations.from(field, value => value.set)
});

class LinkMarker extends GutterMarker {
  constructor(readonly tint: number, readonly selected: boolean) {
    super();
  }
  eq(other: LinkMarker): boolean {
    return other.tint === this.tint && other.selected === this.selected;
  }
  toDOM(): Node {
    const mark = h('div', `tl-link-mark${this.selected ? ' tl-selected' : ''}`);
    mark.style.setProperty('--tl-h', String(tintHue(this.tint)));
    return mark;
  }
}

const linkGutter = gutter({
  class: 'tl-link-gutter',
  markers: view => {
    const { marks } = view.state.field(marksField);
    const builder = new RangeSetBuilder<GutterMarker>();
    for (const line of [...marks.tints.keys()].sort((a, b) => a - b)) {
      if (line >= 1 && line <= view.state.doc.lines) {
        const from = view.state.doc.line(line).from;
        builder.add(from, from, new LinkMarker(marks.tints.get(line)!, marks.selected.has(line)));
      }
    }
    return builder.finish();
  },
  lineMarkerChange: update => update.transactions.some(tr => tr.effects.some(e => e.is(setMarks)))
});

const setMatches = StateEffect.define<SearchQuery | null>();

const matchesField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(value, transaction) {
    for (const effect of transaction.effects) {
      if (effect.is(setMatches)) {
        const query = effect.value;
        if (!query || !query.valid) {
          return Decoration.none;
        }
        const marks = [];
        const cursor = query.getCursor(transaction.state);
        for (let next = cursor.next(); !next.done && marks.length < 10_000; next = cursor.next()) {
          marks.push(Decoration.mark({ class: 'cm-searchMatch tl-match' }).range(next.value.from, next.value.to));
        }
        return Decoration.set(marks);
      }
    }
    return value.map(transaction.changes);
  },
  provide: field => EditorView.decorations.from(field)
});

/** Extensions a view needs for `markMatches`. */
export const matchMarks: Extension = matchesField;

/**
 * Scroll `scroller` (the pane's own scroller, or a diff's) so that lines `first`..`last` of `view`
 * sit in its middle (a run taller than the pane starts near its top). CodeMirror's own
 * scrollIntoView would also scroll the notebook around the widget.
 */
export function scrollLineToMiddle(view: EditorView, first: number, scroller: HTMLElement = view.scrollDOM, last = first): void {
  const doc = view.state.doc;
  if (first < 1 || first > doc.lines) {
    return;
  }
  const top = view.lineBlockAt(doc.line(first).from);
  const bottom = view.lineBlockAt(doc.line(Math.min(Math.max(first, last), doc.lines)).from);
  const editorTop = view.contentDOM.getBoundingClientRect().top - scroller.getBoundingClientRect().top + scroller.scrollTop;
  const height = bottom.bottom - top.top;
  const offset = height < scroller.clientHeight * 0.8 ? (scroller.clientHeight - height) / 2 : scroller.clientHeight * 0.1;
  scroller.scrollTop = Math.max(0, editorTop + top.top - offset);
}

/** Mark every match of `query` in `view` (and leave it in the search panel for Ctrl+F). */
export function markMatches(view: EditorView, query: SearchQuery): void {
  view.dispatch({ effects: [setMatches.of(query), setSearchQuery.of(query)] });
}

/** Mark every match of `query` in `view`, select the first one at or after `line` and scroll it to the middle. */
export function showMatches(view: EditorView, query: SearchQuery, line: number | null, scroller?: HTMLElement): void {
  const doc = view.state.doc;
  const start = line && line <= doc.lines ? doc.line(line).from : 0;
  let first: { from: number; to: number } | null = null;
  const cursor = query.getCursor(view.state, start);
  const next = cursor.next();
  if (!next.done) {
    first = next.value;
  }
  view.dispatch({
    effects: [setMatches.of(query), setSearchQuery.of(query)],
    selection: first ? EditorSelection.range(first.from, first.to) : undefined
  });
  const target = first ? doc.lineAt(first.from).number : line;
  if (target) {
    scrollLineToMiddle(view, target, scroller);
  }
}

export interface IPaneOptions {
  title: string;
  language: string;
  text: string;
  wrap?: boolean;
  /** Called with the 1-based line the user clicked. */
  onLine?: (line: number) => void;
  /** Extra header controls, after the title. */
  controls?: HTMLElement[];
}

/** A titled, read-only code pane with a copy button. */
export class CodePane {
  readonly node: HTMLDivElement;
  readonly view: EditorView;

  constructor(options: IPaneOptions) {
    this._editing = new Editing();
    this.node = h('div', 'tl-pane');
    keepKeys(this.node);
    const header = h('div', 'tl-pane-head');
    header.append(h('span', 'tl-pane-title', options.title), ...(options.controls ?? []), copyButton(() => this.view.state.doc.toString(), options.title));
    const host = h('div', 'tl-pane-editor');
    this.node.append(header, host);
    const clicks: Extension = options.onLine
      ? EditorView.domEventHandlers({
          mousedown: (event, view) => {
            const pos = view.posAtCoords({ x: event.clientX, y: event.clientY });
            if (pos !== null) {
              options.onLine!(view.state.doc.lineAt(pos).number);
            }
            return false;
          }
        })
      : [];
    this.view = new EditorView({
      parent: host,
      state: EditorState.create({
        doc: options.text,
        extensions: [...this._editing.extensions(options.wrap ?? false, true), marksField, linkGutter, matchMarks, clicks]
      })
    });
    this._editing.highlightLater(() => [this.view], options.language);
    this._unfollow = this._editing.followTheme(() => [this.view]);
  }

  /** Tint linked lines (line → group) and mark the selected ones. */
  setMarks(marks: ILineMarks): void {
    this.view.dispatch({ effects: setMarks.of(marks) });
  }

  /** Scroll the pane (only the pane) so that lines `first`..`last` sit in its middle. */
  scrollToLine(first: number, last = first): void {
    scrollLineToMiddle(this.view, first, this.view.scrollDOM, last);
  }

  setWrap(wrap: boolean): void {
    this._editing.setWrap([this.view], wrap);
  }

  destroy(): void {
    this._unfollow();
    this.view.destroy();
    this.node.remove();
  }

  private _editing: Editing;
  private _unfollow: () => void;
}
