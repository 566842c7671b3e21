// Unit tests of wend-plugin's pure parts (node --test sdk/node/test/; scripts/sdk-check runs them).
import test from 'node:test';
import assert from 'node:assert/strict';
import { checkHandshake, NonRetryable, RetryableError, CancelledError, activity } from '../index.js';
import { errorEvent, Context } from '../lib/server.js';

test('checkHandshake', () => {
  const cases = [
    ['started by hand', {}, /This is a wend plugin/],
    ['matching', { WEND_PLUGIN: 'wend-activities-v1', PLUGIN_PROTOCOL_VERSIONS: '1' }, null],
    ['several offered', { WEND_PLUGIN: 'wend-activities-v1', PLUGIN_PROTOCOL_VERSIONS: '2, 1' }, null],
    ['newer wend', { WEND_PLUGIN: 'wend-activities-v1', PLUGIN_PROTOCOL_VERSIONS: '2' }, /protocol mismatch: this wend offers plugin protocol 2 /],
    ['other cookie', { WEND_PLUGIN: 'wend-activities-v2', PLUGIN_PROTOCOL_VERSIONS: '1' }, /\(cookie wend-activities-v2\)/],
  ];
  for (const [name, env, want] of cases) {
    const got = checkHandshake(env);
    if (want === null) assert.equal(got, null, name);
    else assert.match(got, want, name);
  }
});

test('error types', () => {
  const cases = [
    [new NonRetryable('m', { type: 'BadEmail' }), 'BadEmail', true],
    [new NonRetryable('m'), 'NonRetryable', true],
    [new RetryableError('m', { type: 'Busy' }), 'Busy', false],
    [new CancelledError('a', 'deadline'), 'Timeout', false],
    [new CancelledError('a', 'cancelled'), 'Cancelled', false],
  ];
  for (const [err, type, nonRetryable] of cases) assert.deepEqual([err.type, err.nonRetryable], [type, nonRetryable]);
});

test('a retryable error carries the wait before the next try', () => {
  const cases = [
    [new RetryableError('m', { type: 'Busy', nextRetryDelayMs: 7000 }), 7000],
    [new RetryableError('m', { type: 'Busy' }), 0],
    [new NonRetryable('m'), 0],
  ];
  for (const [err, ms] of cases) assert.equal(errorEvent(err).error.next_retry_delay_ms, ms);
});

test('activity registered twice', () => {
  activity('dup', () => 1);
  assert.throws(() => activity('dup', () => 2), /registered twice/);
});

test('a try reads its trace context', () => {
  const tp = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const cases = [['given', tp, tp], ['none', '', ''], ['absent', undefined, '']];
  for (const [name, given, want] of cases) {
    const ctx = new Context({ activity: 'a', attempt: 1, traceparent: given, deadline_unix_nanos: '0' }, () => {});
    assert.equal(ctx.traceparent, want, name);
  }
});

test('ctx.log names the run and step of its try', () => {
  const lines = [];
  const saved = console.error;
  console.error = (...args) => lines.push(args.join(' '));
  try {
    for (const run of ['r1', 'r2']) {
      const ctx = new Context({ activity: 'greet', attempt: 1, run_id: run, step_path: 'steps[0]', deadline_unix_nanos: '0' }, () => {});
      ctx.log('sending');
    }
  } finally {
    console.error = saved;
  }
  assert.deepEqual(lines, ['greet run=r1 step=steps[0]: sending', 'greet run=r2 step=steps[0]: sending']);
});
