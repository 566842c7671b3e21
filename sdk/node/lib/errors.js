// The errors an activity throws to fail a try with a type (as Temporal's ApplicationFailure).

// ActivityError is a typed failure; nonRetryable fails the activity whatever its retry policy.
export class ActivityError extends Error {
  constructor(message, type = 'Error', nonRetryable = false, details = undefined) {
    super(message);
    this.name = 'ActivityError';
    this.type = type;
    this.nonRetryable = nonRetryable;
    this.details = details;
  }
}

// RetryableError is a failure the host retries under the step's retry policy.
export class RetryableError extends ActivityError {
  constructor(message, { type = 'Error', details } = {}) { super(message, type, false, details); }
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
