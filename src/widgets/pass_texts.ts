/**
 * The Passes tab's texts from the kernel: the shapes of its `diff` and `ir`
 * replies, and the cache that keeps them (so going back to a pass is
 * immediate, and an unchanged pass reuses the reply of the pass before it).
 */

import { Channel } from './channel';
import { IDiffData } from './diffview';

/** One row of the pass list (`tilelab.views.passes.data.pass_rows`). */
export interface IPassRow {
  index: number;
  name: string;
  changed: boolean;
  added: number;
  removed: number;
  /** "+3 −1" for a pass that changed the IR, else "". */
  delta: string;
  ms: number;
  /** "4.00 ms". */
  time: string;
}

/** The Passes tab's data, the `passes` trait (`tilelab.views.passes.data.passes_data`). */
export interface IPassesData {
  rows: IPassRow[];
  /** The pass shown first. */
  first: number;
}

export interface IDiffReply extends IDiffData {
  index: number;
  name: string;
  changed: boolean;
  base: number | null;
  base_name: string | null;
  ignore_whitespace: boolean;
}

export interface IIrReply {
  index: number;
  name: string;
  text: string;
}

export const PREFETCH_CHARS = 8_000_000; // IR text asked for ahead, at most

/** Resolves when the browser is idle (or soon, where it cannot tell). */
export function idle(): Promise<void> {
  return new Promise(resolve => {
    const request = (window as any).requestIdleCallback as ((callback: () => void, options: object) => number) | undefined;
    if (request) {
      request(() => resolve(), { timeout: 500 });
    } else {
      window.setTimeout(resolve, 50);
    }
  });
}

/** The kernel's replies, asked for once each: the last 256 are kept. */
export class PassTexts {
  constructor(channel: Channel) {
    this._channel = channel;
  }

  /** Pass `index` diffed against `base` (-1: the pass before it), whitespace ignored or not. */
  diff(index: number, base: number, ignore: boolean): Promise<IDiffReply> {
    return this.cached<IDiffReply>(`diff|${index}|${base}|${ignore}`, 'diff', {
      index,
      base: base < 0 ? null : base,
      ignore_whitespace: ignore
    });
  }

  cached<T>(key: string, type: string, content: Record<string, unknown>): Promise<T> {
    let reply = this._cache.get(key);
    if (!reply) {
      reply = this._channel.request<T>(type, content);
      reply.then(
        value => this._kept.set(key, value),
        () => this._cache.delete(key)
      );
      this._cache.set(key, reply);
      if (this._cache.size > 256) {
        const oldest = this._cache.keys().next().value as string;
        this._cache.delete(oldest);
        this._kept.delete(oldest);
      }
    }
    return reply as Promise<T>;
  }

  /**
   * An unchanged pass diffed against the pass before it, from the kept reply of the last pass
   * that changed the IR (same IR): no need to ask the kernel.
   */
  unchangedFromKept(rows: IPassRow[], position: number, ignore: boolean): IDiffReply | null {
    const row = rows[position];
    const before = rows[position - 1];
    for (let k = position - 1; k >= 0; k--) {
      const kept = this._kept.get(`diff|${rows[k].index}|-1|${ignore}`) as IDiffReply | undefined;
      if (kept) {
        return { ...kept, index: row.index, name: row.name, changed: false, base: before.index, base_name: before.name, before: kept.after, changes: [], hunks: [], added: 0, removed: 0 };
      }
      if (rows[k].changed) {
        return null;
      }
    }
    return null;
  }

  private _channel: Channel;
  private _cache = new Map<string, Promise<unknown>>();
  private _kept = new Map<string, unknown>(); // the replies of _cache that have arrived
}
