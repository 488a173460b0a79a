/**
 * The panel's model: follows the active notebook's kernel and owns the
 * `tilelab` comm to it.
 *
 * The kernel owns the state; this model only mirrors it. When the comm cannot
 * be opened (TileLab not loaded in the kernel, or a restart dropped it), the
 * model says so and tries again each time a cell finishes, so running
 * `%load_ext tilelab` is enough to fill the panel. The comm talks to a kernel
 * subshell where the kernel has them, so the panel follows a cell (a tune)
 * while it runs (`comm_open.ts`). The state it shows is `panel_state.ts`; its
 * requests waiting for a reply are `comm_requests.ts`.
 */

import type { ISessionContext } from '@jupyterlab/apputils';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import { closeComm, waitForSubshell } from './comm_open';
import { PendingRequests } from './comm_requests';
import { EMPTY_STATE, IPanelState, upsert } from './panel_state';
import {
  COMM_TARGET,
  IItemReply,
  IRecordSummary,
  IViewReply,
  ITuningSummary,
  ItemKind,
  KernelMessage as BridgeMessage,
  Request,
  envelope,
  parseMessage
} from './protocol';

/** How long a comm's hello may go unanswered before it is opened again, and how many times. */
const HELLO_WAIT_MS = 8000;
const HELLO_TRIES = 3;

/** Mirrors the TileLab registry of the active notebook's kernel. */
export class TileLabModel {
  constructor(tracker: INotebookTracker) {
    this._tracker = tracker;
    tracker.currentChanged.connect(this._onCurrentChanged, this);
    this._follow(tracker.currentWidget);
  }

  /** Emitted whenever `state` changes. */
  get stateChanged(): ISignal<this, void> {
    return this._stateChanged;
  }

  get state(): IPanelState {
    return this._state;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** The notebook whose kernel the model follows (its widget manager renders live views). */
  get notebook(): NotebookPanel | null {
    return this._notebook;
  }

  /** Ask the kernel for one item's summary and, with `html`, its static snapshot. */
  requestItem(kind: ItemKind, id: string, html: boolean): Promise<IItemReply> {
    return this._request({ type: 'get', kind, id, html }) as Promise<IItemReply>;
  }

  /** Ask the kernel for one item's live view (a widget bundle, or null and why). */
  requestView(kind: ItemKind, id: string): Promise<IViewReply> {
    return this._request({ type: 'open', kind, id }) as Promise<IViewReply>;
  }

  /** Ask the kernel to forget its records and tuning runs (the list then comes back empty). */
  clear(): void {
    if (this._comm !== null && this._state.phase === 'ready') {
      this._send(this._comm, { type: 'clear' });
    }
  }

  /** Reconnect now (the panel's retry button). */
  retry(): void {
    this._reconnect();
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._dropComm();
    this._tracker.currentChanged.disconnect(this._onCurrentChanged, this);
    this._unwatch();
    Signal.clearData(this);
  }

  private _request(request: Request): Promise<IItemReply | IViewReply> {
    const comm = this._comm;
    if (comm === null || this._state.phase !== 'ready') {
      return Promise.reject(new Error('not connected'));
    }
    const { seq, reply } = this._pending.add();
    this._send(comm, request, seq);
    return reply;
  }

  private _onCurrentChanged(_: INotebookTracker, panel: NotebookPanel | null): void {
    this._follow(panel);
  }

  private _follow(panel: NotebookPanel | null): void {
    const context = panel?.sessionContext ?? null;
    if (context === this._context) {
      return;
    }
    this._unwatch();
    this._dropComm();
    this._context = context;
    this._notebook = panel;
    if (context === null) {
      this._setState({ ...EMPTY_STATE });
      return;
    }
    context.kernelChanged.connect(this._onKernelChanged, this);
    context.statusChanged.connect(this._onStatusChanged, this);
    context.iopubMessage.connect(this._onIopub, this);
    context.propertyChanged.connect(this._onPropertyChanged, this);
    this._setState({ ...EMPTY_STATE, phase: 'no-kernel', notebook: context.path || null });
    this._connect();
  }

  private _unwatch(): void {
    const context = this._context;
    if (context !== null) {
      context.kernelChanged.disconnect(this._onKernelChanged, this);
      context.statusChanged.disconnect(this._onStatusChanged, this);
      context.iopubMessage.disconnect(this._onIopub, this);
      context.propertyChanged.disconnect(this._onPropertyChanged, this);
    }
    this._context = null;
  }

  private _onKernelChanged(): void {
    this._reconnect();
  }

  private _reconnect(): void {
    this._dropComm();
    this._setState({ ...this._state, phase: 'no-kernel', problem: null });
    this._connect();
  }

  private _onPropertyChanged(context: ISessionContext, property: string): void {
    if (property === 'path') {
      this._setState({ ...this._state, notebook: context.path || null });
    }
  }

  private _onStatusChanged(_: ISessionContext, status: Kernel.Status): void {
    const gone = ['restarting', 'autorestarting', 'starting', 'dead', 'unknown'];
    if (gone.includes(status)) {
      // A restart disposes the kernel's comms without a comm_close, and the old kernel may still go idle
      // once after 'restarting': a try then is lost with it. The new kernel says 'starting' first, so
      // that lost try is dropped here too, and the new kernel's idle tries again.
      if (this._state.phase !== 'no-kernel' || this._hasComm()) {
        this._dropComm();
        this._setState({ ...this._state, phase: 'no-kernel', records: [], tuning: [] });
      }
    } else if (status === 'idle' && this._state.phase === 'no-kernel') {
      this._dropComm();
      this._connect(); // the (re)started kernel: one try, which finds TileLab loaded or not
    }
  }

  /**
   * Try again when a cell finishes (it may have run `%load_ext tilelab`). Only then: the kernel also
   * goes idle after each of our own attempts (and after creating or deleting the comm's subshell),
   * and retrying on those would never stop.
   */
  private _onIopub(_: ISessionContext, message: KernelMessage.IMessage): void {
    const finished =
      message.header.msg_type === 'status' &&
      (message.content as { execution_state?: string }).execution_state === 'idle' &&
      (message.parent_header as { msg_type?: string }).msg_type === 'execute_request';
    if (finished && !this._hasComm() && this._state.phase !== 'incompatible') {
      this._connect();
    }
  }

  private _hasComm(): boolean {
    return this._comm !== null && !this._comm.isDisposed;
  }

  private _connect(): void {
    const kernel = this._context?.session?.kernel ?? null;
    if (this._isDisposed || this._state.phase === 'incompatible') {
      return;
    }
    if (kernel === null || kernel.status === 'dead' || kernel.status === 'unknown') {
      this._setState({ ...this._state, phase: 'no-kernel', records: [], tuning: [] });
      return;
    }
    const comm = kernel.createComm(COMM_TARGET);
    this._comm = comm;
    comm.onMsg = (msg: KernelMessage.ICommMsgMsg) => this._onMessage(comm, msg.content.data);
    comm.onClose = () => this._onClosed(comm);
    if (this._state.phase !== 'ready') {
      this._setState({ ...this._state, phase: 'connecting' });
    }
    void this._open(kernel, comm);
  }

  /** Open `comm` with a hello, on its kernel subshell where the kernel has them (see `comm_open.ts`). */
  private async _open(kernel: Kernel.IKernelConnection, comm: Kernel.IComm): Promise<void> {
    await waitForSubshell(kernel, comm);
    if (comm.isDisposed) {
      return;
    }
    if (comm !== this._comm) {
      comm.dispose(); // dropped while it waited for its subshell, never opened
      return;
    }
    try {
      this._opened.add(comm);
      void comm.open(envelope({ type: 'hello' })).done.catch(() => this._onClosed(comm));
    } catch {
      this._onClosed(comm); // the kernel went away meanwhile
      return;
    }
    window.setTimeout(() => this._unanswered(comm), HELLO_WAIT_MS);
  }

  /**
   * A comm opened right after a restart can get no answer at all (neither hello nor close): try again,
   * a few times, rather than say "connecting" for good.
   */
  private _unanswered(comm: Kernel.IComm): void {
    if (comm !== this._comm || this._answered.has(comm) || this._state.phase !== 'connecting') {
      return;
    }
    if (this._unansweredTries < HELLO_TRIES) {
      this._unansweredTries += 1;
      this._dropComm();
      this._connect();
    }
  }

  private _dropComm(): void {
    const comm = this._comm;
    this._comm = null;
    this._pending.rejectAll('the connection to the kernel closed');
    if (comm === null || comm.isDisposed) {
      return;
    }
    if (!this._opened.has(comm)) {
      comm.dispose(); // never opened: the kernel does not know it
    } else if (!this._answered.has(comm)) {
      // Opened, not yet answered: the kernel's answer is on its way (a close where TileLab is not loaded).
      // Closing now would leave that answer for a comm the page no longer knows ("Comm not found").
      comm.onClose = () => undefined;
      comm.onMsg = () => closeComm(comm); // TileLab answered after all: now close it
    } else {
      closeComm(comm);
    }
  }

  private _onClosed(comm: Kernel.IComm): void {
    if (comm !== this._comm) {
      return;
    }
    this._comm = null;
    this._pending.rejectAll('the kernel closed the connection');
    if (this._state.phase !== 'incompatible') {
      this._setState({ ...this._state, phase: 'not-loaded', records: [], tuning: [] });
    }
  }

  private _onMessage(comm: Kernel.IComm, data: unknown): void {
    if (comm !== this._comm) {
      return;
    }
    const parsed = parseMessage(data);
    if (!parsed.ok) {
      if (parsed.unknownType !== undefined) {
        console.warn(`TileLab: ignoring a message of unknown type ${parsed.unknownType}`);
      } else if (parsed.problem.startsWith('protocol version')) {
        this._setState({ ...this._state, phase: 'incompatible', problem: parsed.problem });
        this._dropComm();
      } else {
        this._setState({ ...this._state, problem: parsed.problem });
      }
      return;
    }
    this._apply(comm, parsed.message);
  }

  private _apply(comm: Kernel.IComm, message: BridgeMessage): void {
    switch (message.type) {
      case 'hello':
        this._answered.add(comm);
        this._unansweredTries = 0;
        this._setState({ ...this._state, phase: 'ready', kernelVersion: message.tilelab, problem: null });
        this._send(comm, { type: 'subscribe' });
        break;
      case 'list':
        this._setState({ ...this._state, records: message.records, tuning: message.tuning });
        break;
      case 'update':
        if (message.kind === 'record') {
          const records = upsert(this._state.records, message.summary as IRecordSummary);
          this._setState({ ...this._state, records });
        } else {
          const tuning = upsert(this._state.tuning, message.summary as ITuningSummary);
          this._setState({ ...this._state, tuning });
        }
        break;
      case 'item':
      case 'view':
        this._pending.settle(message.seq, message, null);
        break;
      case 'error':
        if (message.code === 'version') {
          this._setState({ ...this._state, phase: 'incompatible', problem: message.message });
          this._dropComm();
        } else if (!this._pending.settle(message.seq, null, message.message)) {
          this._setState({ ...this._state, problem: message.message });
        }
        break;
    }
  }

  private _send(comm: Kernel.IComm, request: Request, seq?: number): void {
    try {
      void comm.send(envelope(request, seq)).done.catch(() => this._onClosed(comm));
    } catch {
      // The comm was disposed under us (a restart): treat it as closed.
      this._onClosed(comm);
    }
  }

  private _setState(state: IPanelState): void {
    this._state = state;
    this._stateChanged.emit();
  }

  private _tracker: INotebookTracker;
  private _context: ISessionContext | null = null;
  private _notebook: NotebookPanel | null = null;
  private _comm: Kernel.IComm | null = null;
  private _opened = new WeakSet<Kernel.IComm>(); // comms whose comm_open was sent
  private _answered = new WeakSet<Kernel.IComm>(); // comms the kernel said hello on
  private _unansweredTries = 0; // opens in a row that got no answer
  private _state: IPanelState = { ...EMPTY_STATE };
  private _pending = new PendingRequests();
  private _isDisposed = false;
  private _stateChanged = new Signal<this, void>(this);
}
