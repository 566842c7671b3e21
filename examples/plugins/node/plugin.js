#!/usr/bin/env node
// wend's example activity plugin in Node.js, on the wend-plugin SDK (sdk/node): the conformance
// set every example plugin shares (greet, echo, sleep, fail, record, resume).
//
// Setup: (cd sdk/node && npm ci). Use it from a workflow with
// `plugins: {demo: {command: [node, plugin.js]}}` (path relative to the workflow file). A plugin
// of your own installs the SDK's tarball (npm install wend-plugin-1.0.0.tgz) and imports 'wend-plugin'.

import fs from 'node:fs';
import { activity, serve, ActivityError, NonRetryable, RetryableError } from '../../../sdk/node/index.js';

const int = { type: 'integer', minimum: 0 };

activity('greet', {
  description: 'Returns a greeting for name.',
  input: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
  output: { type: 'object', required: ['greeting'], properties: { greeting: { type: 'string' } } },
}, (ctx, input) => ({ greeting: `hello, ${input.name}` }));

activity('echo', { description: 'Returns its input unchanged.' }, (ctx, input) => input);

activity('sleep', {
  description: 'Sleeps ms milliseconds, heartbeating every 100 ms; stops early when cancelled.',
  input: { type: 'object', required: ['ms'], properties: { ms: int } },
  output: { type: 'object', required: ['slept_ms'], properties: { slept_ms: { type: 'integer' } } },
}, async (ctx, input) => {
  const start = Date.now();
  const end = start + (input.ms || 0);
  while (Date.now() < end) {
    await ctx.sleep(Math.min(100, end - Date.now()));
    if (Date.now() < end) ctx.heartbeat({ slept_ms: Date.now() - start });
  }
  return { slept_ms: Date.now() - start };
});

activity('fail', {
  description: 'Fails with the given error.',
  input: { type: 'object', properties: { type: { type: 'string' }, message: { type: 'string' }, non_retryable: { type: 'boolean' } } },
}, (ctx, input) => {
  throw new ActivityError(input.message || '', input.type || '', Boolean(input.non_retryable), input.details);
});

activity('record', {
  description: 'Appends one JSON line describing this try to path and fsyncs it.',
  input: { type: 'object', required: ['path'], properties: { path: { type: 'string' }, note: {} } },
  output: { type: 'object' },
}, (ctx, input) => {
  if (!input || !input.path) throw new NonRetryable('record: path is required', { type: 'BadInput' });
  const line = {
    activity_execution_id: ctx.activityExecutionId, activity_attempt_id: ctx.activityAttemptId,
    attempt: ctx.attempt, note: input.note === undefined ? null : input.note, pid: process.pid,
    traceparent: ctx.traceparent,
  };
  const fd = fs.openSync(input.path, 'a', 0o644);
  try {
    fs.writeSync(fd, JSON.stringify(line) + '\n');
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return line;
});

activity('resume', {
  description: 'Does pages 1..pages, heartbeating {page} after each; resumes after the last progress\'s '
    + 'page; a first try fails retryably before page fail_at.',
  input: { type: 'object', required: ['pages'], properties: { pages: int, fail_at: { type: 'integer' } } },
  output: {
    type: 'object', required: ['resumed_from', 'pages'],
    properties: { resumed_from: { type: 'integer' }, pages: { type: 'integer' } },
  },
}, (ctx, input) => {
  const pages = input.pages || 0;
  const last = ctx.lastProgress;
  const start = (last && last.page) || 0;
  for (let page = start + 1; page <= pages; page++) {
    if (page === input.fail_at && last === null) {
      throw new RetryableError(`resume: interrupted before page ${page}`, { type: 'Interrupted' });
    }
    ctx.heartbeat({ page });
  }
  return { resumed_from: start, pages };
});

serve();
