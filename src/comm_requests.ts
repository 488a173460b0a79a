/**
 * The panel's requests waiting for the kernel's reply: each is numbered, and
 * the kernel's `item`, `view` or `error` message with that number settles it.
 */

import { IItemReply, IViewReply } from './protocol';

export type Reply = IItemReply | IViewReply;

interface IPending {
  resolve: (reply: Reply) => void;
  reject: (error: Error) => void;
}

export class PendingRequests {
  /** A new request: its number (to send with it) and the promise of its reply. */
  add(): { seq: number; reply: Promise<Reply> } {
    const seq = ++this._seq;
    const reply = new Promise<Reply>((resolve, reject) => {
      this._pending.set(seq, { resolve, reject });
    });
    return { seq, reply };
  }

  /** Resolve request `seq` with `reply`, or reject it with `error`; false when no such request waits. */
  settle(seq: number | undefined, reply: Reply | null, error: string | null): boolean {
    const pending = seq === undefined ? undefined : this._pending.get(seq);
    if (seq === undefined || pending === undefined) {
      return false;
    }
    this._pending.delete(seq);
    if (reply !== null) {
      pending.resolve(reply);
    } else {
      pending.reject(new Error(error ?? 'failed'));
    }
    return true;
  }

  /** Reject every waiting request with `reason` (the connection closed). */
  rejectAll(reason: string): void {
    const pending = [...this._pending.values()];
    this._pending.clear();
    for (const { reject } of pending) {
      reject(new Error(reason));
    }
  }

  private _pending = new Map<number, IPending>();
  private _seq = 0;
}
