// Types of wend-plugin (hand-written; the code is plain ES modules).

export type JSONValue = null | boolean | number | string | JSONValue[] | { [key: string]: JSONValue };
export type JSONSchema = { [key: string]: unknown };

/** One try of an activity, as the host described it. */
export interface Context {
  readonly activity: string;
  readonly workflowId: string;
  readonly runId: string;
  readonly stepPath: string;
  /** The same for every try of a step: an idempotency key. */
  readonly activityExecutionId: string;
  readonly activityAttemptId: string;
  /** 1 on the first try. */
  readonly attempt: number;
  /** ms since the epoch, or null. */
  readonly deadline: number | null;
  /** The progress the previous try last reported by heartbeat; null on a first try. */
  readonly lastProgress: JSONValue | null;
  /**
   * The try's W3C trace context, `00-<trace id>-<span id>-<flags>`: the run's trace and the
   * span wend records for this try. Give it to your tracer as the remote parent (e.g.
   * `propagation.extract(context.active(), { traceparent: ctx.traceparent })`) so the
   * plugin's spans join the run's trace. '' when the run has no trace context.
   */
  readonly traceparent: string;
  /** True once the host cancelled the try or its deadline passed. */
  readonly cancelled: boolean;
  /** Keeps the try alive and records progress; throws CancelledError once cancelled. */
  heartbeat(progress?: JSONValue): void;
  /** Resolves after ms, sooner when the try is cancelled. */
  wait(ms: number): Promise<void>;
  /** Resolves after ms; rejects with CancelledError as soon as the try is cancelled. */
  sleep(ms: number): Promise<void>;
  throwIfCancelled(): void;
  /** Logs to stderr, which wend shows as the plugin's log lines. */
  log(...args: unknown[]): void;
}

export interface ActivityOptions {
  input?: JSONSchema;
  output?: JSONSchema;
  description?: string;
}

export type ActivityFunction<I = any, O = any> = (ctx: Context, input: I) => O | Promise<O>;

export function activity<I = any, O = any>(name: string, opts: ActivityOptions, fn: ActivityFunction<I, O>): ActivityFunction<I, O>;
export function activity<I = any, O = any>(name: string, fn: ActivityFunction<I, O>): ActivityFunction<I, O>;

/** Serves the registered activities to the wend that started this process. */
export function serve(): void;
/** null when env is a handshake this SDK speaks, else the error message. */
export function checkHandshake(env: { [key: string]: string | undefined }): string | null;
export const PROTOCOL_VERSION: number;
export const VERSION: string;

export class ActivityError extends Error {
  constructor(message: string, type?: string, nonRetryable?: boolean, details?: JSONValue, nextRetryDelayMs?: number);
  type: string;
  nonRetryable: boolean;
  details?: JSONValue;
  /** Over 0: the wait before the next try instead of the step's backoff (a Retry-After). */
  nextRetryDelayMs: number;
}
export class RetryableError extends ActivityError {
  constructor(message: string, opts?: { type?: string; details?: JSONValue; nextRetryDelayMs?: number });
}
export class NonRetryable extends ActivityError {
  constructor(message: string, opts?: { type?: string; details?: JSONValue });
}
export class CancelledError extends ActivityError {
  reason: string;
}
