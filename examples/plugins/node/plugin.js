#!/usr/bin/env node
'use strict';
// wend's example activity plugin in Node.js: the conformance set every example plugin shares
// (greet, echo, sleep, fail, record, resume) on @grpc/grpc-js. Besides wend.plugin.v1.Activities
// it does what go-plugin does for Go plugins: checks the magic cookie, serves the gRPC health
// service (service "plugin": SERVING) and GRPCController.Shutdown, negotiates AutoMTLS
// (mtls.js), prints the handshake line, and exits when its host goes away.
//
// Setup: (cd examples/plugins/node && npm ci). Use it from a workflow with
// `plugins: {demo: {command: [node, plugin.js]}}` (path relative to the workflow file).

const fs = require('fs');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const mtls = require('./mtls');

// Must match plugins/internal/wire.
const COOKIE_KEY = 'WEND_PLUGIN';
const COOKIE_VALUE = 'wend-activities-v1';
const APP_PROTOCOL = 1;
const MAX_PAYLOAD = 2 << 20;
const MAX_MESSAGE = 16 << 20;

class ActivityError extends Error {
  constructor(type, message, nonRetryable = false, details = undefined) {
    super(message);
    this.type = type;
    this.nonRetryable = nonRetryable;
    this.details = details;
  }
}

// Context is one try: its identity, the previous try's last progress, cancellation and
// heartbeats.
class Context {
  constructor(req, heartbeat) {
    this.activity = req.activity;
    this.workflowId = req.workflow_id;
    this.runId = req.run_id;
    this.stepPath = req.step_path;
    this.activityExecutionId = req.activity_execution_id;
    this.activityAttemptId = req.activity_attempt_id;
    this.attempt = req.attempt;
    this.rawLastProgress = req.last_progress; // Buffer; empty on a first try
    const nanos = BigInt(req.deadline_unix_nanos || 0);
    // ms since the epoch, rounded up: the try never reports its deadline passed before it has.
    this.deadline = nanos > 0n ? Number((nanos + 999999n) / 1000000n) : null;
    this.reason = null;
    this.waiters = new Set();
    this.heartbeat = heartbeat;
    if (this.deadline !== null) this.watchDeadline();
  }

  // watchDeadline cancels the try once the wall clock reaches its deadline. Node measures a
  // timeout from its event loop's cached time, which lags when the loop was busy, so a timer
  // can fire early: it checks the clock and waits again rather than cancel before the deadline
  // (the host counts a plugin's Timeout error as the deadline's only once that has passed).
  watchDeadline() {
    const left = this.deadline - Date.now();
    if (left <= 0) this.cancel('deadline');
    else this.deadlineTimer = setTimeout(() => this.watchDeadline(), left);
  }

  get cancelled() { return this.reason !== null; }

  // lastProgress is the progress the previous try last reported, as heartbeat() was given it
  // (decoded from the JSON recorded in the workflow's history); null on a first try. Read it to
  // resume instead of starting over. It is decoded when read, so a bad value fails the activity.
  get lastProgress() {
    const raw = this.rawLastProgress;
    return raw && raw.length > 0 ? JSON.parse(raw.toString('utf8')) : null;
  }

  cancel(reason) {
    if (this.reason !== null) return;
    this.reason = reason;
    clearTimeout(this.deadlineTimer);
    for (const wake of this.waiters) wake();
  }

  // wait resolves after ms, or sooner when the try is cancelled.
  wait(ms) {
    return new Promise((resolve) => {
      if (this.cancelled) return resolve();
      const done = () => { clearTimeout(timer); this.waiters.delete(done); resolve(); };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  // check throws the error that ends a cancelled try.
  check() {
    if (this.reason === 'deadline') throw new ActivityError('Timeout', `${this.activity}: deadline exceeded`);
    if (this.cancelled) throw new ActivityError('Cancelled', `${this.activity}: cancelled by the host`);
  }

  done() { clearTimeout(this.deadlineTimer); }
}

// The conformance set shared by every example plugin.
const activities = {
  greet: {
    description: 'Returns a greeting for name.',
    input: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
    output: { type: 'object', required: ['greeting'], properties: { greeting: { type: 'string' } } },
    run: async (ctx, input) => ({ greeting: `hello, ${input.name}` }),
  },
  echo: {
    description: 'Returns its input unchanged.',
    input: {},
    output: {},
    run: async (ctx, input) => input,
  },
  sleep: {
    description: 'Sleeps ms milliseconds, heartbeating every 100 ms; stops early when cancelled.',
    input: { type: 'object', required: ['ms'], properties: { ms: { type: 'integer', minimum: 0 } } },
    output: { type: 'object', required: ['slept_ms'], properties: { slept_ms: { type: 'integer' } } },
    run: async (ctx, input) => {
      const start = Date.now();
      const end = start + (input.ms || 0);
      for (;;) {
        const left = end - Date.now();
        if (left <= 0) return { slept_ms: Date.now() - start };
        await ctx.wait(Math.min(100, left));
        ctx.check();
        if (Date.now() < end) ctx.heartbeat({ slept_ms: Date.now() - start });
      }
    },
  },
  fail: {
    description: 'Fails with the given error.',
    input: {
      type: 'object',
      properties: { type: { type: 'string' }, message: { type: 'string' }, non_retryable: { type: 'boolean' } },
    },
    output: {},
    run: async (ctx, input) => {
      throw new ActivityError(input.type || '', input.message || '', Boolean(input.non_retryable), input.details);
    },
  },
  record: {
    description: 'Appends one JSON line describing this try to path and fsyncs it.',
    input: { type: 'object', required: ['path'], properties: { path: { type: 'string' }, note: {} } },
    output: { type: 'object' },
    run: async (ctx, input) => {
      if (!input || !input.path) throw new ActivityError('BadInput', 'record: path is required', true);
      const line = {
        activity_execution_id: ctx.activityExecutionId,
        activity_attempt_id: ctx.activityAttemptId,
        attempt: ctx.attempt,
        note: input.note === undefined ? null : input.note,
        pid: process.pid,
      };
      const fd = fs.openSync(input.path, 'a', 0o644);
      try {
        fs.writeSync(fd, JSON.stringify(line) + '\n');
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      return line;
    },
  },
  resume: {
    description: 'Does pages 1..pages, heartbeating {page} after each; resumes after the last progress\'s '
      + 'page; a first try fails retryably before page fail_at.',
    input: {
      type: 'object', required: ['pages'],
      properties: { pages: { type: 'integer', minimum: 0 }, fail_at: { type: 'integer' } },
    },
    output: {
      type: 'object', required: ['resumed_from', 'pages'],
      properties: { resumed_from: { type: 'integer' }, pages: { type: 'integer' } },
    },
    run: async (ctx, input) => {
      const pages = input.pages || 0;
      const last = ctx.lastProgress;
      const start = (last && last.page) || 0;
      for (let page = start + 1; page <= pages; page++) {
        if (page === input.fail_at && last === null) {
          throw new ActivityError('Interrupted', `resume: interrupted before page ${page}`);
        }
        ctx.heartbeat({ page });
      }
      return { resumed_from: start, pages };
    },
  },
};

const json = (v) => Buffer.from(v === undefined ? 'null' : JSON.stringify(v));

function errorEvent(e) {
  return {
    error: {
      type: e.type, message: e.message, non_retryable: e.nonRetryable,
      details: e.details === undefined ? Buffer.alloc(0) : json(e.details),
    },
  };
}

function describe(call, callback) {
  callback(null, {
    activities: Object.keys(activities).sort().map((name) => ({
      name,
      description: activities[name].description,
      input_schema: json(activities[name].input),
      output_schema: json(activities[name].output),
    })),
  });
}

// startTry runs one try of req: send(event, final) gets its heartbeats, then exactly one result
// or error (final true), after which nothing is sent. Returns the try's Context, which cancels it.
// Execute and Lane share it.
function startTry(req, send) {
  let ended = false;
  const ctx = new Context(req, (progress) => {
    if (!ended) send({ heartbeat: { progress: progress === undefined ? Buffer.alloc(0) : json(progress) } }, false);
  });
  run(req, ctx).then((event) => {
    ended = true;
    ctx.done();
    send(event, true);
  });
  return ctx;
}

function execute(call) {
  let ctx = null;
  call.on('cancelled', () => { if (ctx) ctx.cancel('cancelled'); });
  call.on('error', () => { if (ctx) ctx.cancel('cancelled'); });
  call.on('data', (msg) => {
    if (ctx !== null) { // after the request only Cancel comes
      if (msg.cancel) ctx.cancel(msg.cancel.reason || 'cancelled');
      return;
    }
    const req = msg.request;
    if (!req) {
      call.destroy({ code: grpc.status.INVALID_ARGUMENT, details: 'execute: first message must be a request' });
      return;
    }
    ctx = startTry(req, (event, final) => {
      call.write(event);
      if (final) call.end();
    });
  });
}

// lane is Execute many times over one stream, one try at a time (see activities.proto). A
// request starts a try once the last one has ended; a cancel applies to the latest request's try
// and is ignored when there is none in flight. When the host closes its send side, that try too
// is cancelled and the lane ends cleanly once it has sent its final event; when the stream
// breaks, the try in flight is cancelled and nothing more is sent. (A host waits for a result
// before its next request; queueing one that comes early is what the Go SDK does too.)
function lane(call) {
  let ctx = null; // the try in flight
  const waiting = []; // {req, reason}: requests sent before the last try ended
  let closed = false; // the host closed its send side
  let broken = false;
  const start = ({ req, reason }) => {
    ctx = startTry(req, (event, final) => {
      if (broken) return;
      call.write(event);
      if (!final) return;
      ctx = null;
      if (waiting.length > 0) start(waiting.shift());
      else if (closed) call.end();
    });
    if (reason) ctx.cancel(reason);
  };
  const cancelLatest = (reason) => {
    if (waiting.length > 0) waiting[waiting.length - 1].reason ||= reason;
    else if (ctx) ctx.cancel(reason);
  };
  const stop = () => {
    broken = true;
    waiting.length = 0;
    if (ctx) ctx.cancel('cancelled');
  };
  call.on('cancelled', stop);
  call.on('error', stop);
  call.on('data', (msg) => {
    if (msg.cancel) {
      cancelLatest(msg.cancel.reason || 'cancelled');
    } else if (msg.request) {
      if (ctx) waiting.push({ req: msg.request, reason: null });
      else start({ req: msg.request, reason: null });
    }
  });
  call.on('end', () => {
    closed = true;
    if (ctx) cancelLatest('cancelled');
    else if (!broken) call.end();
  });
}

async function run(req, ctx) {
  const act = activities[req.activity];
  if (!act) {
    return errorEvent(new ActivityError('UnknownActivity',
      `unknown activity "${req.activity}" (have ${JSON.stringify(Object.keys(activities).sort())})`, true));
  }
  if (req.input.length > MAX_PAYLOAD) {
    return errorEvent(new ActivityError('PayloadTooLarge',
      `input of ${req.activity} is ${req.input.length} bytes, over the ${MAX_PAYLOAD}-byte limit`, true));
  }
  let input = null;
  try {
    if (req.input.length > 0) input = JSON.parse(req.input.toString('utf8'));
  } catch (e) {
    return errorEvent(new ActivityError('BadInput', `decode input of ${req.activity}: ${e.message}`, true));
  }
  try {
    const out = json(await act.run(ctx, input));
    if (out.length > MAX_PAYLOAD) {
      return errorEvent(new ActivityError('PayloadTooLarge',
        `output of ${req.activity} is ${out.length} bytes, over the ${MAX_PAYLOAD}-byte limit`, true));
    }
    return { result: { output: out } };
  } catch (e) {
    if (e instanceof ActivityError) return errorEvent(e);
    return errorEvent(new ActivityError('Error', `${e.name}: ${e.message}`)); // retryable
  }
}

function main() {
  if (process.env[COOKIE_KEY] !== COOKIE_VALUE) {
    process.stderr.write('This is a wend plugin; wend starts it (see `wend plugin describe`).\n');
    process.exit(1);
  }
  const versions = (process.env.PLUGIN_PROTOCOL_VERSIONS || String(APP_PROTOCOL)).split(',');
  if (!versions.includes(String(APP_PROTOCOL))) {
    process.stderr.write(`wend plugin: host speaks protocol versions ${versions}, this plugin ${APP_PROTOCOL}\n`);
    process.exit(1);
  }
  // Exit when the host is gone: the parent-death signal covers Linux, this covers the rest.
  const ppid = Number(process.env.WEND_HOST_PID) || process.ppid;
  const watchParent = () => {
    if (process.ppid !== ppid) {
      process.stderr.write(`wend plugin: host process ${ppid} is gone; exiting\n`);
      process.exit(1);
    }
  };
  watchParent();
  setInterval(watchParent, 1000).unref();

  const protoDir = path.join(__dirname, '..', 'proto');
  const wendProtoDir = path.join(__dirname, '..', '..', '..', 'plugins', 'proto', 'wend', 'plugin', 'v1');
  const defs = protoLoader.loadSync(['activities.proto', 'health.proto', 'grpc_controller.proto'], {
    includeDirs: [wendProtoDir, protoDir], keepCase: true, longs: String, defaults: true, oneofs: true,
  });
  const proto = grpc.loadPackageDefinition(defs);

  const server = new grpc.Server({
    'grpc.max_receive_message_length': MAX_MESSAGE,
    'grpc.max_send_message_length': MAX_MESSAGE,
  });
  server.addService(proto.wend.plugin.v1.Activities.service, { Describe: describe, Execute: execute, Lane: lane });
  server.addService(proto.grpc.health.v1.Health.service, {
    Check: (call, callback) => {
      const known = call.request.service === '' || call.request.service === 'plugin';
      callback(null, { status: known ? 'SERVING' : 'SERVICE_UNKNOWN' });
    },
    Watch: (call) => call.write({ status: 'SERVING' }), // go-plugin does not watch
  });
  server.addService(proto.plugin.GRPCController.service, {
    Shutdown: (call, callback) => {
      callback(null, {});
      setImmediate(() => {
        server.forceShutdown();
        process.exit(0);
      });
    },
  });

  let creds = grpc.ServerCredentials.createInsecure();
  let certField = '';
  if (process.env.PLUGIN_CLIENT_CERT) { // AutoMTLS: trust only the host's certificate, present our own
    const cert = mtls.serverCertificate();
    creds = grpc.ServerCredentials.createSsl(Buffer.from(process.env.PLUGIN_CLIENT_CERT),
      [{ private_key: cert.keyPem, cert_chain: cert.certPem }], true);
    certField = '|' + mtls.handshakeCert(cert.certDer);
  }
  server.bindAsync('127.0.0.1:0', creds, (err, port) => {
    if (err) {
      process.stderr.write(`wend plugin: listen: ${err.message}\n`);
      process.exit(1);
    }
    process.stdout.write(`1|${APP_PROTOCOL}|tcp|127.0.0.1:${port}|grpc${certField}\n`);
  });
}

main();
