/**
 * The messages of the `tilelab` comm, mirrored from `tilelab/bridge.py`
 * (its module docstring is the reference).
 *
 * Every message is `{v: 2, type, ...}`; a request may carry `seq`, which the
 * reply echoes. The panel only asks for data by id: it never asks the kernel to
 * run code. Snapshots are shown in a sandboxed iframe; a live view's bundle is
 * a widget id rendered by the notebook's own widget manager.
 *
 * Version 2 added `open` (a live view's mime bundle), `clear`, and the run
 * facts of record summaries (`created`, `run`, `current`).
 */

import type { JSONObject } from '@lumino/coreutils';

/** The protocol version this panel speaks. */
export const PROTOCOL_VERSION = 2;

/** The comm target registered by `%load_ext tilelab`. */
export const COMM_TARGET = 'tilelab';

/** What a list entry is. */
export type ItemKind = 'record' | 'tuning';

/** A kernel record's summary (`KernelRecord.summary()` plus bridge fields). */
export interface IRecordSummary {
  id: string;
  name: string;
  status: string;
  mode: string;
  arch: string;
  target: string;
  passes: number;
  compile_s: number;
  error: string | null;
  best_latency_ms: number | null;
  from_cache: boolean;
  /** When the compile finished (seconds since the epoch). */
  created: number;
  /** Its number among the runs of its kernel name, from 1. */
  run: number;
  /** Whether it is the newest run of its kernel name. */
  current: boolean;
}

/** A tuning run's summary (`TuneResult.summary()`); only `id` is required. */
export interface ITuningSummary {
  id: string;
  /** The kernel's name. */
  name?: string;
  running?: boolean;
  /** Stopped before every config ran (interrupted or timed out). */
  partial?: boolean;
  done?: number;
  total?: number;
  failed?: number;
  best_config?: JSONObject | null;
  best_latency_ms?: number | null;
  /** What tells this run from the others of its kernel: fixed arguments, swept names, search, device. */
  detail?: string | null;
}

/** Requests, panel to kernel. */
export type Request =
  | { type: 'hello' }
  | { type: 'list' }
  | { type: 'subscribe' }
  | { type: 'unsubscribe' }
  | { type: 'get'; kind: ItemKind; id: string; html: boolean }
  | { type: 'open'; kind: ItemKind; id: string }
  | { type: 'clear' };

export interface IHelloReply {
  type: 'hello';
  protocol: number;
  tilelab: string;
}

export interface IListReply {
  type: 'list';
  records: IRecordSummary[];
  tuning: ITuningSummary[];
}

export interface IItemReply {
  type: 'item';
  kind: ItemKind;
  id: string;
  summary: IRecordSummary | ITuningSummary;
  html?: string | null;
}

/** The reply to `open`: the live view's mime bundle, or null and why not. */
export interface IViewReply {
  type: 'view';
  kind: ItemKind;
  id: string;
  summary: IRecordSummary | ITuningSummary;
  bundle: JSONObject | null;
  problem?: string | null;
}

export interface IUpdate {
  type: 'update';
  kind: ItemKind;
  summary: IRecordSummary | ITuningSummary;
}

export interface IErrorReply {
  type: 'error';
  code: string;
  message: string;
  supported?: number[];
}

/** Messages, kernel to panel. */
export type KernelMessage = (IHelloReply | IListReply | IItemReply | IViewReply | IUpdate | IErrorReply) & {
  seq?: number;
};

/** The result of parsing one message from the kernel. */
export type Parsed =
  | { ok: true; message: KernelMessage }
  | { ok: false; unknownType?: string; problem: string };

type Data = { [key: string]: unknown };

function isObject(value: unknown): value is Data {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

function isBoolean(value: unknown): value is boolean {
  return typeof value === 'boolean';
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isOptional<T>(value: unknown, check: (v: unknown) => v is T): boolean {
  return value === undefined || value === null || check(value);
}

function isKind(value: unknown): value is ItemKind {
  return value === 'record' || value === 'tuning';
}

/** Whether `value` has the shape of a record summary. */
export function isRecordSummary(value: unknown): value is IRecordSummary {
  return (
    isObject(value) &&
    isString(value.id) &&
    isString(value.name) &&
    isString(value.status) &&
    isString(value.mode) &&
    isString(value.arch) &&
    isNumber(value.passes) &&
    isNumber(value.compile_s) &&
    isOptional(value.error, isString) &&
    isOptional(value.best_latency_ms, isNumber) &&
    isNumber(value.created) &&
    isNumber(value.run) &&
    isBoolean(value.current)
  );
}

/** Whether `value` has the shape of a tuning summary. */
export function isTuningSummary(value: unknown): value is ITuningSummary {
  return (
    isObject(value) &&
    isString(value.id) &&
    isOptional(value.name, isString) &&
    isOptional(value.running, isBoolean) &&
    isOptional(value.partial, isBoolean) &&
    isOptional(value.done, isNumber) &&
    isOptional(value.total, isNumber) &&
    isOptional(value.best_config, isObject) &&
    isOptional(value.best_latency_ms, isNumber)
  );
}

function isSummary(kind: ItemKind, value: unknown): boolean {
  return kind === 'record' ? isRecordSummary(value) : isTuningSummary(value);
}

/** An item's kind, id and summary: what `item` and `view` messages both carry. */
function isItem(data: Data): boolean {
  return isKind(data.kind) && isString(data.id) && isSummary(data.kind, data.summary);
}

function checkBody(data: Data): string | null {
  switch (data.type) {
    case 'hello':
      return isNumber(data.protocol) && isString(data.tilelab) ? null : 'hello';
    case 'list':
      return Array.isArray(data.records) &&
        data.records.every(isRecordSummary) &&
        Array.isArray(data.tuning) &&
        data.tuning.every(isTuningSummary)
        ? null
        : 'list';
    case 'item':
      return isItem(data) && isOptional(data.html, isString) ? null : 'item';
    case 'view':
      return isItem(data) && (data.bundle === null || isObject(data.bundle)) && isOptional(data.problem, isString)
        ? null
        : 'view';
    case 'update':
      return isKind(data.kind) && isSummary(data.kind, data.summary) ? null : 'update';
    case 'error':
      return isString(data.code) && isString(data.message) ? null : 'error';
    default:
      return String(data.type);
  }
}

const KNOWN_TYPES = new Set(['hello', 'list', 'item', 'view', 'update', 'error']);

/** Validate one `comm_msg` payload from the kernel. */
export function parseMessage(data: unknown): Parsed {
  if (!isObject(data)) {
    return { ok: false, problem: 'not an object' };
  }
  if (data.v !== PROTOCOL_VERSION) {
    return { ok: false, problem: `protocol version ${String(data.v)}` };
  }
  if (!isString(data.type)) {
    return { ok: false, problem: 'no type' };
  }
  if (!KNOWN_TYPES.has(data.type)) {
    return { ok: false, unknownType: data.type, problem: 'unknown type' };
  }
  if (data.seq !== undefined && !isNumber(data.seq)) {
    return { ok: false, problem: 'bad seq' };
  }
  const bad = checkBody(data);
  if (bad !== null) {
    return { ok: false, problem: `malformed ${bad} message` };
  }
  return { ok: true, message: data as unknown as KernelMessage };
}

/** Wrap a request in the protocol's envelope. */
export function envelope(request: Request, seq?: number): JSONObject {
  const message: JSONObject = { v: PROTOCOL_VERSION, ...request };
  if (seq !== undefined) {
    message.seq = seq;
  }
  return message;
}
