/**
 * The Explorer's shell: a title, a tab bar (arrow keys move between tabs) and
 * each tab's view, built the first time the tab is shown. Tab kinds:
 * "overview" (`overview.ts`), "profile" (`profile.ts`), "passes", "linked" (two linked
 * code panes: the Source tab, or a machine-code tab answering its own request
 * with the same reply shape, see `linked.ts`), "machine" (resources, instruction
 * classes and SASS/PTX linked to the CUDA, see `machine.ts`), "layouts" (the
 * layout grid, see `layouts.ts`).
 */

import { Channel } from './channel';
import { h, keepKeys, message } from './dom';
import { LayoutsTab } from './layouts';
import { LinkedTab } from './source';
import { MachineTab } from './machine';
import { fillOverview } from './overview';
import { IModel, save, watch } from './model';
import { PassesTab } from './passes';
import { fillProfile } from './profile';
import { requestedTab } from './requested';

interface ITabSpec {
  id: string;
  title: string;
  kind: 'overview' | 'profile' | 'passes' | 'linked' | 'machine' | 'layouts';
  request?: string;
  /** "linked" tabs: the synced trait of the selected left-hand line, the words for the two sides, a third pane. */
  selection?: string;
  words?: [string, string];
  extra?: { request: string; label: string } | null;
}

interface ITabView {
  node: HTMLElement;
  dispose(): void;
}

function tabView(spec: ITabSpec, model: IModel, channel: Channel): ITabView {
  switch (spec.kind) {
    case 'profile':
      return requestedTab(model, channel, spec.request ?? spec.id, 'tl-html tl-profile', fillProfile);
    case 'overview':
      return requestedTab(model, channel, spec.request ?? spec.id, 'tl-html tl-overview', fillOverview);
    case 'passes': {
      const tab = new PassesTab(model, channel);
      return { node: tab.node, dispose: () => tab.dispose() };
    }
    case 'linked': {
      // Defaults are the Source tab's; a machine-code tab names its own (e.g. CUDA line / SASS line).
      const tab = new LinkedTab(model, channel, {
        request: spec.request ?? spec.id,
        selection: spec.selection ?? 'source_line',
        words: spec.words ?? ['cell line', 'CUDA line'],
        extra: spec.extra === undefined ? { request: 'host', label: 'host code' } : spec.extra ?? undefined,
        followsMachineCode: true
      });
      return { node: tab.node, dispose: () => tab.dispose() };
    }
    case 'machine': {
      const tab = new MachineTab(model, channel);
      return { node: tab.node, dispose: () => tab.dispose() };
    }
    case 'layouts': {
      const tab = new LayoutsTab(model, channel);
      return { node: tab.node, dispose: () => tab.dispose() };
    }
    default: {
      const node = h('div');
      message(node, `TileLab cannot draw a ${JSON.stringify(spec.kind)} tab.`, 'error');
      return { node, dispose: () => undefined };
    }
  }
}

export function renderExplorer(model: IModel, el: HTMLElement): () => void {
  const channel = new Channel(model);
  const specs = model.get('tabs') as ITabSpec[];
  const root = h('div', 'tl-explorer');
  const bar = h('div', 'tl-tabbar');
  bar.setAttribute('role', 'tablist');
  keepKeys(bar);
  const title = h('span', 'tl-explorer-title', model.get('title'));
  title.title = model.get('title');
  const tabs = h('div', 'tl-tabs');  // one group: on a narrow view it wraps under the title whole
  bar.append(title, tabs);
  const body = h('div', 'tl-tabbody');
  root.append(bar, body);
  el.appendChild(root);
  const views = new Map<string, ITabView>();
  const buttons = specs.map(spec => {
    const tab = h('button', 'tl-tab', spec.title);
    tab.type = 'button';
    tab.setAttribute('role', 'tab');
    tab.dataset.tab = spec.id;
    tab.addEventListener('click', () => save(model, 'tab', spec.id));
    tabs.appendChild(tab);
    return tab;
  });
  bar.addEventListener('keydown', event => {
    const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
    if (step === undefined) {
      return;
    }
    event.preventDefault();
    const at = specs.findIndex(spec => spec.id === model.get('tab'));
    const next = specs[(at + step + specs.length) % specs.length];
    save(model, 'tab', next.id);
    buttons[specs.indexOf(next)].focus();
  });
  const show = (): void => {
    const id = model.get('tab') as string;
    const spec = specs.find(candidate => candidate.id === id) ?? specs[0];
    buttons.forEach((tab, k) => {
      const on = specs[k] === spec;
      tab.classList.toggle('tl-on', on);
      tab.setAttribute('aria-selected', on ? 'true' : 'false');
      tab.tabIndex = on ? 0 : -1;
    });
    if (!views.has(spec.id)) {
      const view = tabView(spec, model, channel);
      view.node.classList.add('tl-tabpanel');
      view.node.setAttribute('role', 'tabpanel');
      view.node.dataset.tab = spec.id;
      views.set(spec.id, view);
      body.appendChild(view.node);
    }
    for (const [id, view] of views) {
      view.node.hidden = id !== spec.id;
    }
    root.dataset.tab = spec.id;
  };
  const unwatch = watch(model, 'tab', show);
  show();
  return () => {
    unwatch();
    views.forEach(view => view.dispose());
    channel.dispose();
    root.remove();
  };
}
