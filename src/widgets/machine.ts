/**
 * The Machine code tab: for one device kernel (a picker when there are several) a resource card
 * (registers, spills, shared memory, barriers, stack, occupancy against the arch's limits,
 * launchable or why not) and its SASS instructions by class; below, the kernel's SASS or PTX
 * beside the CUDA in a `LinkedTab` (click a SASS line: its CUDA line lights up and the status
 * names the cell line it came from). The kernel's CUDA lines with the most SASS instructions (a static
 * count, not a profile), each with the cell line the record's source map gives it: a row selects its CUDA
 * line in the panes. Until machine code exists the tab says why in one line, and asks again when the
 * kernel bumps `machine_updates` (the record was replaced by its finished build).
 * The reply is `tilelab.views.machine.data.machine_data`, the dict the snapshot draws: Python shapes every
 * string (labels, colours, the tools line); they go in through `textContent` only.
 */

import { Channel } from './channel';
import { activates, h, keepKeys, message } from './dom';
import { LinkedTab } from './source';
import { IModel, save, watch } from './model';

interface IClassRow {
  class: string;
  count: number;
  share: number;
  colour: string;
  opcodes: [string, number][];
  more: number;
}

/** A kernel's resources and occupancy; null where its resources were not read. */
interface ICard {
  /** `[label, value, level]`, level "" or "bad". */
  rows: [string, string, string][];
  occupancy: number | null;
  /** The occupancy as the snapshot shows it, "12.5%". */
  occupancy_text: string;
  launchable: boolean;
  reasons: string[];
  limits: string;
}

/** A CUDA line with many SASS instructions; `cell_line` null where the source map links it to no cell line. */
interface IHotLine {
  cuda_line: number;
  code: string;
  cell_line: number | null;
  cell_code: string;
  instructions: number;
  /** `[class, count, colour]`, most first. */
  classes: [string, number, string][];
}

interface IKernel {
  name: string;
  card: ICard | null;
  classes: IClassRow[];
  instructions: number;
  hot_lines: IHotLine[];
}

interface IMachineReply {
  state: 'ready' | 'none' | 'pending' | 'failed';
  /** Why there is nothing to show (one line), '' when ready. */
  message: string;
  /** The build's log (a failed build), '' otherwise. */
  log: string;
  head: string | null;
  notes: string[];
  warnings: string[];
  codes: string[];
  kernels: IKernel[];
  /** `[name, path and version, short label]` of each CUDA tool. */
  tools: [string, string, string][];
  seconds: number;
}

const WORDS: Record<string, [string, string]> = { sass: ['CUDA line', 'SASS line'], ptx: ['CUDA line', 'PTX line'] };

function percent(share: number, digits = share < 0.1 ? 1 : 0): string {
  return `${(share * 100).toFixed(digits)}%`;
}

/** A thin bar filled to `share` (0..1). */
function meter(share: number): HTMLElement {
  const bar = h('span', 'tl-meter');
  const fill = h('span', 'tl-meter-fill');
  fill.style.width = `${Math.max(0, Math.min(1, share)) * 100}%`;
  bar.appendChild(fill);
  return bar;
}

function resourceCard(card: ICard): HTMLElement {
  const node = h('section', 'tl-machine-card');
  node.dataset.launchable = String(card.launchable);
  const head = h('div', 'tl-machine-card-head');
  head.append(
    h('span', 'tl-machine-card-title', 'Resources'),
    h('span', `tl-badge ${card.launchable ? 'tl-good' : 'tl-bad'}`, card.launchable ? 'launchable' : 'cannot launch')
  );
  node.appendChild(head);
  for (const reason of card.reasons) {
    node.appendChild(h('div', 'tl-machine-reason', `cannot launch: ${reason}`));
  }
  const table = h('table', 'tl-machine-table tl-machine-resources');
  for (const [label, value, level] of card.rows) {
    const row = table.insertRow();
    row.append(h('th', '', label), h('td', level ? `tl-${level}` : '', value));
  }
  if (card.occupancy !== null) {
    const row = table.insertRow();
    const cell = h('td', 'tl-machine-occupancy');
    cell.append(meter(card.occupancy), h('span', '', card.occupancy_text));
    row.append(h('th', '', 'theoretical occupancy'), cell);
  }
  node.appendChild(table);
  if (card.limits) {
    node.appendChild(h('p', 'tl-machine-limits', card.limits));
  }
  return node;
}

function classTable(kernel: IKernel): HTMLElement {
  const node = h('section', 'tl-machine-classes');
  const head = h('div', 'tl-machine-card-head');
  head.append(h('span', 'tl-machine-card-title', 'SASS instructions by class'), h('span', 'tl-hint', `${kernel.instructions} in all`));
  node.appendChild(head);
  if (!kernel.classes.length) {
    node.appendChild(h('p', 'tl-hint', 'No SASS instructions were counted (no disassembler: see the note above).'));
    return node;
  }
  const table = h('table', 'tl-machine-table tl-machine-counts');
  const header = table.createTHead().insertRow();
  for (const title of ['class', 'count', 'share', 'opcodes']) {
    header.appendChild(h('th', '', title));
  }
  const body = table.createTBody();
  for (const row of kernel.classes) {
    const tr = body.insertRow();
    tr.dataset.class = row.class;
    const name = h('td', 'tl-machine-class');
    const swatch = h('span', 'tl-swatch');
    swatch.style.backgroundColor = row.colour;
    name.append(swatch, h('span', '', row.class));
    const share = h('td', 'tl-machine-share');
    share.append(meter(row.share), h('span', '', percent(row.share)));
    // A no-break space inside each item: a wrapped list breaks between items, never between an opcode and its count.
    const opcodes = row.opcodes.map(([op, n]) => `${op}\u00a0${n}`).join(' · ') + (row.more ? ` · +${row.more}\u00a0more` : '');
    tr.append(name, h('td', 'tl-num', row.count), share, h('td', 'tl-machine-ops', opcodes));
  }
  node.appendChild(table);
  return node;
}

/** The kernel's CUDA lines with the most SASS instructions; a row (clicked, or Enter) calls `pick` with its CUDA line. */
function hotLineTable(kernel: IKernel, pick: (cudaLine: number) => void): HTMLElement {
  const node = h('details', 'tl-machine-hot');
  const top = kernel.hot_lines[0];
  const where = top.cell_line === null ? '' : ` (cell line ${top.cell_line}: ${top.cell_code})`;
  const summary = h('summary', '', `CUDA lines with the most SASS: line ${top.cuda_line} has ${top.instructions} instructions${where}`);
  node.appendChild(summary);
  const table = h('table', 'tl-machine-table tl-machine-hot-lines');
  const header = table.createTHead().insertRow();
  for (const title of ['line', 'CUDA', 'cell line', 'SASS', 'classes']) {
    header.appendChild(h('th', '', title));
  }
  const body = table.createTBody();
  for (const line of kernel.hot_lines) {
    const tr = body.insertRow();
    tr.dataset.cudaLine = String(line.cuda_line);
    tr.title = `Show CUDA line ${line.cuda_line} and its SASS in the panes below`;
    const code = h('td', 'tl-machine-ops', line.code);
    code.title = line.code;
    const cell = h('td', 'tl-machine-ops');
    if (line.cell_line === null) {
      cell.textContent = '—';
      cell.title = 'No cell line: TileLang emitted it for the kernel as a whole';
    } else {
      cell.append(h('b', '', `${line.cell_line} `), h('span', '', line.cell_code));
      cell.title = `cell line ${line.cell_line}: ${line.cell_code}`;
    }
    const classes = h('td', 'tl-machine-hot-classes');
    for (const [name, count, colour] of line.classes) {
      const swatch = h('span', 'tl-swatch');
      swatch.style.backgroundColor = colour;
      const item = h('span', 'tl-machine-hot-class');
      item.title = `${name}: ${count}`;
      item.append(swatch, h('span', '', `${count}`));
      classes.appendChild(item);
    }
    tr.append(h('td', 'tl-num', line.cuda_line), code, cell, h('td', 'tl-num', line.instructions), classes);
    activates(tr, () => pick(line.cuda_line));
  }
  node.appendChild(table);
  return node;
}

export class MachineTab {
  readonly node: HTMLDivElement;

  constructor(model: IModel, channel: Channel) {
    this._model = model;
    this._channel = channel;
    this.node = h('div', 'tl-machine');
    keepKeys(this.node);
    message(this.node, 'loading…');
    this._unwatch = watch(model, 'machine_updates', () => void this._load());
    void this._load();
  }

  dispose(): void {
    this._unwatch();
    this._dropCode();
  }

  private async _load(): Promise<void> {
    let reply: IMachineReply;
    try {
      reply = await this._channel.request<IMachineReply>('machine');
    } catch (error) {
      this._dropCode();
      message(this.node, (error as Error).message, 'error');
      this.node.dataset.state = 'error';
      return;
    }
    this._dropCode();
    this.node.dataset.state = reply.state;
    if (reply.state !== 'ready') {
      message(this.node, reply.message || 'No machine code.', reply.state === 'failed' ? 'error' : 'hint');
      if (reply.log) {
        const details = h('details', 'tl-machine-error');
        details.append(h('summary', '', 'nvcc output'), h('pre', '', reply.log));
        this.node.appendChild(details);
      }
      return;
    }
    this._reply = reply;
    const kernels = reply.kernels;
    if (!kernels.some(kernel => kernel.name === this._kernel)) {
      this._kernel = kernels[0]?.name ?? '';
    }
    const codes = reply.codes;
    if (!codes.includes(this._code)) {
      this._code = codes[0] ?? 'sass';
    }
    this.node.replaceChildren(this._toolbar(kernels, codes));
    for (const note of [...reply.notes, ...reply.warnings]) {
      this.node.appendChild(h('div', 'tl-machine-note', note));
    }
    this.node.append(this._facts, this._codeBox);
    if (reply.tools.length) {
      const tools = reply.tools.map(([, , short]) => short).join(' · ');
      this.node.appendChild(h('p', 'tl-machine-tools', `${tools}; ${reply.seconds.toFixed(2)} s`));
    }
    this._showKernel();
  }

  private _toolbar(kernels: IKernel[], codes: string[]): HTMLElement {
    const bar = h('div', 'tl-toolbar tl-machine-head');
    if (kernels.length > 1) {
      const label = h('label', 'tl-machine-picker');
      const select = h('select', 'tl-machine-kernel');
      select.title = 'The device kernel to show';
      for (const kernel of kernels) {
        const option = h('option', '', kernel.name);
        option.value = kernel.name;
        select.appendChild(option);
      }
      select.value = this._kernel;
      select.addEventListener('change', () => {
        this._kernel = select.value;
        this._showKernel();
      });
      label.append(h('span', '', `kernel (${kernels.length})`), select);
      bar.appendChild(label);
    } else if (kernels.length === 1) {
      bar.appendChild(h('span', 'tl-machine-kernel-name', kernels[0].name));
    }
    bar.appendChild(h('span', 'tl-hint', this._reply?.head ?? ''));
    const switcher = h('span', 'tl-segmented tl-machine-codes');
    switcher.setAttribute('role', 'group');
    for (const code of codes) {
      const button = h('button', 'tl-btn', code.toUpperCase());
      button.type = 'button';
      button.dataset.code = code;
      button.title = `Show the ${code.toUpperCase()} beside the CUDA`;
      button.addEventListener('click', () => {
        this._code = code;
        this._showCode();
      });
      switcher.appendChild(button);
    }
    bar.appendChild(switcher);
    return bar;
  }

  private _showKernel(): void {
    const kernel = this._reply?.kernels?.find(candidate => candidate.name === this._kernel);
    this.node.dataset.kernel = this._kernel;
    this._facts.replaceChildren(...(kernel ? [...(kernel.card ? [resourceCard(kernel.card)] : []), classTable(kernel)] : []));
    if (kernel?.hot_lines.length) {
      this._facts.appendChild(hotLineTable(kernel, line => this._pickCudaLine(line)));
    }
    this._showCode();
  }

  /** Select `line` in the CUDA pane (its SASS or PTX lights up) and bring the panes into view. */
  private _pickCudaLine(line: number): void {
    this._facts.querySelectorAll<HTMLElement>('.tl-machine-hot-lines tr[data-cuda-line]').forEach(row => {
      row.classList.toggle('tl-selected', row.dataset.cudaLine === String(line));
    });
    save(this._model, 'cuda_line', line);
    this._codeBox.scrollIntoView({ block: 'start' });
  }

  private _showCode(): void {
    this._dropCode();
    this.node.dataset.code = this._code;
    this.node.querySelectorAll<HTMLButtonElement>('.tl-machine-codes .tl-btn').forEach(button => {
      const on = button.dataset.code === this._code;
      button.classList.toggle('tl-on', on);
      button.setAttribute('aria-pressed', on ? 'true' : 'false');
    });
    if (!this._kernel) {
      return;
    }
    this._linked = new LinkedTab(this._model, this._channel, {
      request: 'machine_code',
      content: { kernel: this._kernel, code: this._code },
      selection: 'cuda_line',
      words: WORDS[this._code] ?? ['CUDA line', `${this._code.toUpperCase()} line`]
    });
    this._codeBox.replaceChildren(this._linked.node);
  }

  private _dropCode(): void {
    this._linked?.dispose();
    this._linked?.node.remove();
    this._linked = null;
  }

  private _model: IModel;
  private _channel: Channel;
  private _unwatch: () => void;
  private _reply: IMachineReply | null = null;
  private _kernel = '';
  private _code = 'sass';
  private _linked: LinkedTab | null = null;
  private _facts = h('div', 'tl-machine-facts');
  private _codeBox = h('div', 'tl-machine-code');
}
