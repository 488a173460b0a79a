/**
 * `tilelab.compare(a, b)`: the passes of two records aligned by name; the
 * selected row's two IRs diffed side by side (or unified), whitespace ignored
 * or not. Passes only one record ran are marked.
 */

import { Channel } from './channel';
import { DiffView, IDiffData, fittedMode, splitFits } from './diffview';
import { button, checkbox, h, message, watchWidth } from './dom';
import { IModel, save, watch } from './model';
import { KeyList } from './passlist';
import { Splitter } from './splitter';

/** An aligned row: the pass of each record (name and index, null where it did not run) and whether their IRs are the same. */
type Row = [string | null, number | null, string | null, number | null, boolean];

/**
 * The Compare tab's data, `CompareData.data` in `tilelab/views/compare/data.py`: its
 * `WIDGET_KEYS` arrive as the widget's synced traits (the IRs travel as `pair` replies).
 */
export interface ICompareData {
  labels: [string, string];
  rows: Row[];
  only: [string[], string[]];
  selected: number;
}

/** One row's pair (`CompareData.pair`): the snapshot draws its shown row's from the same dict. */
interface IPairReply extends IDiffData {
  row: number;
  a: { index: number; name: string } | null;
  b: { index: number; name: string } | null;
  same: boolean;
}

function compareData(model: IModel): ICompareData {
  const [labels, rows, only, selected] = ['labels', 'rows', 'only', 'selected'].map(key => model.get(key));
  return { labels, rows, only, selected } as ICompareData;
}

export function renderCompare(model: IModel, el: HTMLElement): () => void {
  const channel = new Channel(model);
  const {
    labels: [labelA, labelB],
    only: [onlyA, onlyB],
    rows
  } = compareData(model);
  const root = h('div', 'tl-compare tl-passes');
  const only = h('div', 'tl-note');
  only.append(
    h('div', '', `only in ${labelA}: ${onlyA.length ? onlyA.join(', ') : 'none'}`),
    h('div', '', `only in ${labelB}: ${onlyB.length ? onlyB.join(', ') : 'none'}`)
  );
  const detail = h('div', 'tl-detail');
  message(detail, 'Select a pass (click, or j / k in the list) to diff its IR in both records.');
  const list = new KeyList(
    rows.map(([nameA, indexA, nameB, indexB, same]) => ({
      cells: [
        { text: same ? '=' : '≠', className: 'tl-mark' },
        { text: nameA === null ? '—' : `#${indexA} ${nameA}`, className: 'tl-name' },
        { text: nameB === null ? '—' : `#${indexB} ${nameB}`, className: 'tl-name' }
      ],
      title: `${labelA}: ${nameA ?? '—'}\n${labelB}: ${nameB ?? '—'}\n${same ? 'same IR' : 'the IRs differ'}`,
      className: `tl-compare-row${nameA === null || nameB === null ? ' tl-only' : ''}${same ? ' tl-unchanged' : ' tl-changed'}`
    })),
    'Aligned passes',
    position => save(model, 'selected', position),
    () => content?.views()[0]?.focus()
  );
  const head = h('div', 'tl-row tl-compare-head');
  head.append(h('span', 'tl-mark', ''), h('span', 'tl-name', labelA), h('span', 'tl-name', labelB));
  const listBox = h('div', 'tl-listbox');
  listBox.append(head, list.node);
  const body = h('div', 'tl-passes-body');
  body.append(listBox, new Splitter(root, '--tl-list-width', '--tl-list-height').node, detail);
  root.append(only, body);
  el.appendChild(root);
  const unwatchWidth = watchWidth(root, width => {
    const wasNarrow = root.classList.contains('tl-narrow');
    if (root.classList.toggle('tl-narrow', width < 760) !== wasNarrow) {
      list.reveal(); // the list's box changed: keep the selected pass in sight
    }
    const shown = root.dataset.shownMode; // side by side asked for, drawn in the other mode than now fits: again
    if (model.get('diff_mode') === 'split' && (shown === 'split' || shown === 'unified') && (shown === 'split') !== splitFits(detail)) {
      void load();
    }
  });

  let content: DiffView | null = null;
  let seq = 0;
  let wrap = true;
  const load = async (): Promise<void> => {
    const row = model.get('selected') as number;
    if (row < 0) {
      return;
    }
    list.mark(row);
    const mine = ++seq;
    let reply: IPairReply;
    try {
      reply = await channel.request<IPairReply>('pair', { row, ignore_whitespace: model.get('ignore_whitespace') });
    } catch (error) {
      message(detail, (error as Error).message, 'error');
      return;
    }
    if (mine !== seq) {
      return;
    }
    content?.destroy();
    content = null;
    const name = (side: IPairReply['a'], label: string): string => (side ? `${label}: #${side.index} ${side.name}` : `${label}: —`);
    const title = h('div', 'tl-detail-head');
    title.append(h('span', 'tl-detail-title', `${name(reply.a, labelA)}  ·  ${name(reply.b, labelB)}`));
    const controls = h('div', 'tl-toolbar');
    const mode = model.get('diff_mode') as 'split' | 'unified';
    const modes = h('div', 'tl-segmented');
    for (const [value, label] of [['split', 'Side by side'], ['unified', 'Unified']]) {
      modes.appendChild(button(label, label, () => save(model, 'diff_mode', value), value === mode ? 'tl-btn tl-on' : 'tl-btn'));
    }
    controls.append(
      modes,
      checkbox('ignore whitespace', model.get('ignore_whitespace'), on => save(model, 'ignore_whitespace', on)),
      checkbox('wrap lines', wrap, on => {
        wrap = on;
        content?.setWrap(on);
      })
    );
    if (reply.same || !reply.changes.length) {
      detail.replaceChildren(title, controls, h('p', 'tl-hint', reply.same ? 'Identical IR in both records.' : 'Only whitespace differs.'));
    } else {
      const fitted = fittedMode(mode, detail);
      content = new DiffView({
        mode: fitted.mode,
        before: reply.before,
        after: reply.after,
        changes: reply.changes,
        language: 'tir',
        titles: [name(reply.a, labelA), name(reply.b, labelB)],
        wrap
      });
      title.appendChild(h('span', 'tl-facts', `+${reply.added} −${reply.removed} lines from ${labelA} to ${labelB}${fitted.note}`));
      detail.replaceChildren(title, controls, content.node);
      root.dataset.shownMode = fitted.mode;
    }
    root.dataset.shownRow = String(row);
  };
  const unwatch = ['selected', 'diff_mode', 'ignore_whitespace'].map(name => watch(model, name, () => void load()));
  void load();
  return () => {
    unwatch.forEach(stop => stop());
    unwatchWidth();
    content?.destroy();
    channel.dispose();
    root.remove();
  };
}
