/**
 * The Source tab: two code panes linked line to line, the cell beside its
 * CUDA, rendered from the dict that `source_data` shapes in
 * `tilelab/views/source/data.py` (the snapshot renders the same dict). The
 * Machine code tab shows CUDA beside SASS with the same component and reply
 * shape. Linked lines are tinted in both panes, one colour per left-hand line;
 * clicking a line lights up its twins, scrolls them to the middle and says how
 * the link was found, or why there is none.
 */

import { Channel } from './channel';
import { CodePane } from './codepane';
import { button, checkbox, h, message, watchWidth } from './dom';
import { IModel, save, watch } from './model';

interface IPaneText {
  title: string;
  language: string;
  text: string;
}

/** `source_data`'s dict (and the Machine code tab's panes reply, in the same shape). */
export interface ILinkedReply {
  panes: IPaneText[];
  /** `[right line, left line, how]` */
  links: [number, number, string][];
  how?: Record<string, string>;
  ops?: Record<string, string>;
  unlinked?: Record<string, string>;
  has_host?: boolean;
  note?: string;
  /** Without source: the snapshot's note on the machine code (the tab shows `note`). */
  binary_note?: string;
  /** Why a right-hand line may have no left-hand line. */
  unlinked_right?: string;
  /** Why a left-hand line (not in `unlinked`) may have no right-hand lines. */
  unlinked_left?: string;
  /** Words for the two sides, where the reply names them (a CPU kernel's "C line"); else the options'. */
  words?: [string, string];
}

export interface ILinkedOptions {
  request: string;
  /** The synced trait holding the selected left-hand line. */
  selection: string;
  /** Words for the two sides in the status line, e.g. ["cell line", "CUDA line"]. */
  words: [string, string];
  /** A request for a third, unlinked pane (the host code), if any. */
  extra?: { request: string; label: string };
  /** What the request carries besides its type (e.g. which kernel's machine code). */
  content?: Record<string, unknown>;
  /** Ask again when the record's machine code arrives, for the note on it (the Source tab; not the Machine
   * code tab's own panes, which that tab draws anew). */
  followsMachineCode?: boolean;
}

/** `lines` as runs ("3, 5–9, 12"); past `most` runs, how many lines and runs are left out. */
function ranges(lines: number[], most = 8): string {
  const spans: string[] = [];
  let start = lines[0];
  let previous = lines[0];
  for (const line of [...lines.slice(1), NaN]) {
    if (line === previous + 1) {
      previous = line;
      continue;
    }
    spans.push(start === previous ? `${start}` : `${start}–${previous}`);
    start = previous = line;
  }
  if (spans.length <= most) {
    return spans.join(', ');
  }
  return `${spans.slice(0, most).join(', ')} … (${lines.length} lines in ${spans.length} runs, up to ${lines[lines.length - 1]})`;
}

/** The last line of the run of consecutive lines that starts the sorted `lines`. */
function firstRunEnd(lines: number[]): number {
  let end = lines[0];
  while (lines.includes(end + 1)) {
    end += 1;
  }
  return end;
}

export class LinkedTab {
  readonly node: HTMLDivElement;

  constructor(model: IModel, channel: Channel, options: ILinkedOptions) {
    this._model = model;
    this._channel = channel;
    this._options = options;
    this.node = h('div', 'tl-linked');
    message(this.node, 'loading…');
    void this._load();
  }

  dispose(): void {
    this._unwatch?.();
    this._unwatchMachine?.();
    this._unwatchWidth?.();
    this._panes.forEach(pane => pane.destroy());
    this._extra?.destroy();
  }

  private get _words(): [string, string] {
    return this._reply?.words ?? this._options.words;
  }

  private async _load(): Promise<void> {
    let reply: ILinkedReply;
    try {
      reply = await this._ask();
    } catch (error) {
      message(this.node, (error as Error).message, 'error');
      return;
    }
    if (reply.panes.length < 2) {
      message(this.node, reply.note ?? 'Nothing to show.');
      return;
    }
    this._reply = reply;
    for (const [right, left] of reply.links) {
      this._rightToLeft.set(right, left);
      this._leftToRight.set(left, [...(this._leftToRight.get(left) ?? []), right]);
    }
    const groups = [...this._leftToRight.keys()].sort((a, b) => a - b);
    groups.forEach((left, k) => this._group.set(left, k));
    const [leftText, rightText] = reply.panes;
    this._panes = [
      new CodePane({ ...leftText, onLine: line => this._pickLeft(line) }),
      new CodePane({ ...rightText, onLine: line => this._pickRight(line) })
    ];
    this._panes[0].node.classList.add('tl-pane-left');
    this._panes[1].node.classList.add('tl-pane-right');
    const toolbar = h('div', 'tl-toolbar');
    toolbar.append(
      h('span', 'tl-hint', `Click a line in either pane: its linked lines light up in the other (tinted lines are linked, one colour per ${this._words[0]}).`),
      checkbox('wrap lines', false, on => this._panes.forEach(pane => pane.setWrap(on)))
    );
    if (this._options.extra && reply.has_host) {
      const extra = this._options.extra;
      toolbar.appendChild(button(extra.label, `Show or hide the ${extra.label}`, () => void this._toggleExtra(), 'tl-btn tl-extra'));
    }
    const panes = h('div', 'tl-panes');
    panes.append(this._panes[0].node, this._panes[1].node);
    this._unwatchWidth = watchWidth(this.node, width => this.node.classList.toggle('tl-narrow', width < 760));
    this._status.setAttribute('aria-live', 'polite');
    // The status above the panes: under them it falls below the window at 800 px, where nobody reads it.
    this.node.replaceChildren(toolbar, this._status, panes, this._extraBox, this._note);
    this._showNote(reply.note);
    if (this._options.followsMachineCode) {
      // The note says where the machine code is, which the kernel may build after this tab was drawn.
      this._unwatchMachine = watch(this._model, 'machine_updates', () => void this._reloadNote());
    }
    this._unwatch = watch(this._model, this._options.selection, () => {
      const line = this._model.get(this._options.selection) as number;
      if (line === this._echo) {
        this._echo = null; // our own change from a right-hand click: already shown
        return;
      }
      this._applyLeft(line, true);
    });
    this._paintAll(new Set(), new Set());
    const selected = this._model.get(this._options.selection) as number;
    if (selected > 0) {
      this._applyLeft(selected, true);
    } else {
      this._status.textContent = `${this._leftToRight.size} ${this._words[0]}s link to ${this._rightToLeft.size} ${this._words[1]}s.`;
    }
  }

  private _ask(): Promise<ILinkedReply> {
    return this._channel.request<ILinkedReply>(this._options.request, this._options.content);
  }

  private _showNote(note: string | undefined): void {
    this._note.textContent = note ?? '';
    this._note.hidden = !note;
  }

  /** Ask again and redraw only the note: the panes, their selection and scroll stay as the reader left them. */
  private async _reloadNote(): Promise<void> {
    try {
      this._showNote((await this._ask()).note);
    } catch {
      // The tab already drawn stays; the next update asks again.
    }
  }

  private _paintAll(leftSelected: Set<number>, rightSelected: Set<number>): void {
    const leftTints = new Map([...this._group].map(([left, k]) => [left, k]));
    const rightTints = new Map([...this._rightToLeft].map(([right, left]) => [right, this._group.get(left)!]));
    this._panes[0].setMarks({ tints: leftTints, selected: leftSelected });
    this._panes[1].setMarks({ tints: rightTints, selected: rightSelected });
    this.node.dataset.selectedLeft = [...leftSelected].join(',');
    this.node.dataset.selectedRight = [...rightSelected].sort((a, b) => a - b).join(',');
  }

  private _pickLeft(line: number): void {
    if (this._model.get(this._options.selection) !== line) {
      this._echo = line;
      save(this._model, this._options.selection, line);
    }
    this._applyLeft(line, false);
  }

  private _applyLeft(line: number, scrollLeft: boolean): void {
    const [leftWord, rightWord] = this._words;
    const rights = this._leftToRight.get(line);
    if (!rights) {
      this._paintAll(new Set(), new Set());
      if (line > 0) {
        const reason =
          this._reply?.unlinked?.[String(line)] ?? this._reply?.unlinked_left ?? 'TileLang generated no device code from it (not a tile op, or fused away).';
        this._status.textContent = `${leftWord} ${line} has no ${rightWord}s: ${reason}`;
        this.node.dataset.status = 'unlinked';
      }
      return;
    }
    this._paintAll(new Set([line]), new Set(rights));
    if (scrollLeft) {
      this._panes[0].scrollToLine(line);
    }
    this._panes[1].scrollToLine(rights[0], firstRunEnd(rights));
    const op = this._reply?.ops?.[String(line)];
    this._status.textContent = `${leftWord} ${line}${op ? ` (${op})` : ''} → ${rightWord}s ${ranges(rights)}${this._howSummary(rights)}`;
    this.node.dataset.status = 'linked';
  }

  private _pickRight(line: number): void {
    const [leftWord, rightWord] = this._words;
    const left = this._rightToLeft.get(line);
    if (left === undefined) {
      this._paintAll(new Set(), new Set());
      const why = this._reply?.unlinked_right ?? 'no link was found for it.';
      this._status.textContent = `${rightWord} ${line} has no ${leftWord}: ${why}`;
      this.node.dataset.status = 'unlinked';
      return;
    }
    const rights = this._leftToRight.get(left)!;
    this._paintAll(new Set([left]), new Set(rights));
    this._panes[0].scrollToLine(left);
    const how = this._reply?.how?.[this._howOf(line)] ?? '';
    const op = this._reply?.ops?.[String(left)];
    this._status.textContent = `${rightWord} ${line} ← ${leftWord} ${left}${op ? ` (${op})` : ''}${how ? `, found through ${how}` : ''}`;
    this.node.dataset.status = 'linked';
    if (this._model.get(this._options.selection) !== left) {
      this._echo = left;
      save(this._model, this._options.selection, left);
    }
  }

  private _howOf(right: number): string {
    return this._reply?.links.find(link => link[0] === right)?.[2] ?? '';
  }

  private _howSummary(rights: number[]): string {
    const kinds = new Set(rights.map(right => this._howOf(right)));
    const words = [...kinds].map(kind => this._reply?.how?.[kind]).filter(Boolean);
    return words.length ? `, found through ${words.join('; ')}` : '';
  }

  private async _toggleExtra(): Promise<void> {
    if (this._extra) {
      this._extra.destroy();
      this._extra = null;
      return;
    }
    message(this._extraBox, 'loading…');
    try {
      const reply = await this._channel.request<IPaneText>(this._options.extra!.request);
      this._extra = new CodePane(reply);
      this._extraBox.replaceChildren(this._extra.node);
    } catch (error) {
      message(this._extraBox, (error as Error).message, 'error');
    }
  }

  private _model: IModel;
  private _channel: Channel;
  private _options: ILinkedOptions;
  private _reply: ILinkedReply | null = null;
  private _panes: CodePane[] = [];
  private _extra: CodePane | null = null;
  private _extraBox = h('div', 'tl-extra-box');
  private _status = h('div', 'tl-status');
  private _leftToRight = new Map<number, number[]>();
  private _rightToLeft = new Map<number, number>();
  private _group = new Map<number, number>();
  private _note = h('p', 'tl-note');
  private _unwatch: (() => void) | null = null;
  private _unwatchMachine: (() => void) | null = null;
  private _echo: number | null = null;
  private _unwatchWidth: (() => void) | null = null;
}
