// The errors an activity throws to fail a try with a type (as Temporal's ApplicationFailure).

// ActivityError is a typed failure; nonRetryable fails the activity whatever its retry policy.
// nextRetryDelayMs, when given, is the wait before the next try instead of the step's backoff,
// as a server's Retry-After asks.
export class ActivityError extends Error {
  constructor(message, type = 'Error', nonRetryable = false, details = undefined, nextRetryDelayMs = 0) {
    super(message);
    this.name = 'ActivityError';
    this.type = type;
    this.nonRetryable = nonRetryable;
    this.details = details;
    this.nextRetryDelayMs = nextRetryDelayMs;
  }
}

// RetryableError is a failure the host retries under the step's retry policy; nextRetryDelayMs
// replaces the step's backoff before the next try.
export class RetryableError extends ActivityError {
  constructor(message, { type = 'Error', details, nextRetryDelayMs = 0 } = {}) { super(message, type, false, details, nextRetryDelayMs); }
}

// NonRetryable is a failure no retry can fix: the activity fails at once.
export class NonRetryable extends ActivityError {
  constructor(message, { type = 'NonRetryable', details } = {}) { super(message, type, true, details); }
}

// CancelledError ends a try the host cancelled (type Cancelled) or whose deadline passed (Timeout).
export class CancelledError extends ActivityError {
  constructor(activity, reason) {
    super(reason === 'deadline' ? `${activity}: deadline exceeded` : `${activity}: cancelled by the host (${reason})`,
      reason === 'deadline' ? 'Timeout' : 'Cancelled');
    this.reason = reason;
  }
}
