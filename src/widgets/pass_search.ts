/**
 * The Passes tab's search over every pass's IR: the search bar, and the list
 * of passes where a match first appears, grows or shrinks. Picking a hit
 * shows that pass with the matches marked (`showPendingSearch`).
 */

import { SearchQuery } from '@codemirror/search';
import { Channel } from './channel';
import { CodePane, showMatches } from './codepane';
import { DiffView } from './diffview';
import { button, checkbox, h, keepKeys, message } from './dom';

export type HitKind = 'first' | 'adds' | 'removes';

export interface IHit {
  index: number;
  name: string;
  kind: HitKind;
  before: number;
  after: number;
  side: 'a' | 'b';
  line: number | null;
}

interface ISearchReply {
  query: string;
  regex: boolean;
  case: boolean;
  hits: IHit[];
  final: number;
}

/** A search to show once its pass is on screen. */
export interface IPendingSearch {
  index: number;
  query: string;
  side: 'a' | 'b';
  line: number | null;
  regexp: boolean;
  caseSensitive: boolean;
}

const HIT_WORDS = { first: 'first contains', adds: 'adds', removes: 'removes' };

/** The search bar and its hits; `onHits` marks the pass list, `onJump` shows a hit's pass. */
export class IrSearch {
  readonly node: HTMLElement;

  constructor(
    channel: Channel,
    onHits: (hits: IHit[]) => void,
    onJump: (hit: IHit, query: string, regexp: boolean, caseSensitive: boolean) => void
  ) {
    this._channel = channel;
    this._onHits = onHits;
    this._onJump = onJump;
    this.node = this._searchBar();
  }

  private _searchBar(): HTMLElement {
    const bar = h('div', 'tl-toolbar tl-irsearch');
    const input = h('input', 'tl-irsearch-input');
    input.type = 'search';
    input.placeholder = 'search the IR of every pass (e.g. tma_copy)';
    keepKeys(input);
    let regexp = false;
    let caseSensitive = false;
    const run = (): void => void this._search(input.value, regexp, caseSensitive);
    input.addEventListener('keydown', event => {
      if (event.key === 'Enter') {
        event.preventDefault();
        run();
      }
    });
    bar.append(
      input,
      button('Find in IR', 'List the passes whose IR first contains, adds or removes a match', run, 'tl-btn tl-irsearch-go'),
      checkbox('regex', false, on => (regexp = on)),
      checkbox('match case', false, on => (caseSensitive = on))
    );
    const wrapper = h('div', 'tl-irsearch-box');
    wrapper.append(bar, this._hits);
    return wrapper;
  }

  private async _search(query: string, regexp: boolean, caseSensitive: boolean): Promise<void> {
    if (!query.trim()) {
      message(this._hits, 'Type a name to look for, e.g. tma_copy or T.gemm.');
      return;
    }
    message(this._hits, 'searching…');
    let reply: ISearchReply;
    try {
      reply = await this._channel.request<ISearchReply>('search', { query, regex: regexp, case: caseSensitive });
    } catch (error) {
      message(this._hits, (error as Error).message, 'error');
      return;
    }
    this._onHits(reply.hits);
    if (!reply.hits.length) {
      message(this._hits, `No pass's IR contains “${query}”.`);
      return;
    }
    const list = h('div', 'tl-hits');
    list.setAttribute('role', 'list');
    for (const hit of reply.hits) {
      const row = button('', `Show #${hit.index} ${hit.name} with the matches of “${query}”`, () => this._onJump(hit, query, regexp, caseSensitive), 'tl-hit');
      row.dataset.passIndex = String(hit.index);
      row.dataset.kind = hit.kind;
      row.append(
        h('span', `tl-hit-kind tl-hit-${hit.kind}`, HIT_WORDS[hit.kind]),
        h('span', 'tl-hit-name', `#${hit.index} ${hit.name}`),
        h('span', 'tl-hit-count', `${hit.before} → ${hit.after} matches`)
      );
      list.appendChild(row);
    }
    const summary = h('div', 'tl-hint', `“${query}”: ${reply.hits.length} passes change its count; ${reply.final} in the final IR.`);
    this._hits.replaceChildren(summary, list);
  }

  private _channel: Channel;
  private _onHits: (hits: IHit[]) => void;
  private _onJump: (hit: IHit, query: string, regexp: boolean, caseSensitive: boolean) => void;
  private _hits = h('div', 'tl-hits-box');
}

/** Mark `pending`'s matches in what is shown: a diff (on the hit's side) or one IR pane. */
export function showPendingSearch(shown: { diff?: DiffView; pane?: CodePane }, pending: IPendingSearch): void {
  const { query, side, line, regexp, caseSensitive } = pending;
  if (shown.diff) {
    shown.diff.search(query, side, line, { regexp, caseSensitive });
  } else if (shown.pane) {
    showMatches(shown.pane.view, new SearchQuery({ search: query, regexp, caseSensitive }), side === 'b' ? line : null);
  }
}
