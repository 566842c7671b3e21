// The plumbing of a wend plugin: what go-plugin does for a Go plugin (the magic cookie and
// protocol version check, the gRPC health service, GRPCController.Shutdown, AutoMTLS, the
// handshake line, exiting when the host goes away) and the wend.plugin.v1.Activities service
// (Describe, Execute, Lane) over the activities registered with activity().

import { fileURLToPath } from 'node:url';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import * as mtls from './mtls.js';
import { ActivityError, CancelledError } from './errors.js';

// Must match sdk/go/wire: the magic cookie and the protocol version the host offers.
const COOKIE_KEY = 'WEND_PLUGIN';
const COOKIE_VALUE = 'wend-activities-v1';
const APP_PROTOCOL = 1;
export const PROTOCOL_VERSION = APP_PROTOCOL;
export const VERSION = '0.1.0';
const MAX_PAYLOAD = 2 << 20;
const MAX_MESSAGE = 16 << 20;

const registry = Object.create(null);

// activity registers fn(ctx, input) (sync or async) as the activity name; opts.input and
// opts.output are its JSON Schemas, opts.description its one-line description.
export function activity(name, opts, fn) {
  if (typeof opts === 'function') { fn = opts; opts = {}; }
  if (typeof name !== 'string' || !name) throw new TypeError('wend-plugin: activity wants a name');
  if (typeof fn !== 'function') throw new TypeError(`wend-plugin: activity ${name} wants a function`);
  if (registry[name]) throw new Error(`wend-plugin: activity ${name} registered twice`);
  registry[name] = { run: fn, description: opts.description || '', input: opts.input || {}, output: opts.output || {} };
  return fn;
}

// checkHandshake returns null when wend started this process with a protocol this SDK speaks,
// else the message to print before exiting.
export function checkHandshake(env) {
  const cookie = env[COOKIE_KEY];
  if (cookie === undefined) return 'This is a wend plugin; wend starts it (see `wend plugin describe`).';
  const versions = (env.PLUGIN_PROTOCOL_VERSIONS || String(APP_PROTOCOL)).split(',').map((v) => v.trim());
  if (cookie !== COOKIE_VALUE || !versions.includes(String(APP_PROTOCOL))) {
    return `wend plugin: protocol mismatch: this wend offers plugin protocol ${versions.join(',')} (cookie ${cookie}), ` +
      `wend-plugin ${VERSION} speaks protocol ${APP_PROTOCOL} (cookie ${COOKIE_VALUE}); ` +
      'install the wend-plugin released with your wend';
  }
  return null;
}

// Context is one try: its identity, the previous try's last progress, its trace context,
// cancellation and heartbeats.
export class Context {
  constructor(req, heartbeat) {
    this.activity = req.activity;
    this.workflowId = req.workflow_id;
    this.runId = req.run_id;
    this.stepPath = req.step_path;
    this.activityExecutionId = req.activity_execution_id;
    this.activityAttemptId = req.activity_attempt_id;
    this.attempt = req.attempt;
    this.rawLastProgress = req.last_progress; // Buffer; empty on a first try
    // The try's W3C trace context ('00-<trace id>-<span id>-<flags>': the run's trace, the
    // try's span), for the plugin's own spans to join; '' when the run has none.
    this.traceparent = req.traceparent || '';
    const nanos = BigInt(req.deadline_unix_nanos || 0);
    // ms since the epoch, rounded up: the try never reports its deadline passed before it has.
    this.deadline = nanos > 0n ? Number((nanos + 999999n) / 1000000n) : null;
    this.reason = null;
    this.waiters = new Set();
    this.sendHeartbeat = heartbeat;
    // Its lines name the try's run and step: one plugin process serves many runs at once.
    this.log = (...args) => console.error(`${req.activity} run=${req.run_id} step=${req.step_path}:`, ...args);
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

  // heartbeat keeps the try alive (heartbeat_timeout) and records progress (any JSON value) for
  // the next try's lastProgress; it throws CancelledError once the host cancelled the try.
  heartbeat(progress) {
    this.throwIfCancelled();
    this.sendHeartbeat(progress);
  }

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

  // throwIfCancelled throws the CancelledError that ends a cancelled try.
  throwIfCancelled() {
    if (this.cancelled) throw new CancelledError(this.activity, this.reason);
  }

  // sleep resolves after ms; it rejects with CancelledError as soon as the try is cancelled.
  async sleep(ms) {
    await this.wait(ms);
    this.throwIfCancelled();
  }

  done() { clearTimeout(this.deadlineTimer); }
}

const json = (v) => Buffer.from(v === undefined ? 'null' : JSON.stringify(v));

export function errorEvent(e) {
  return {
    error: {
      type: e.type, message: e.message, non_retryable: e.nonRetryable,
      details: e.details === undefined ? Buffer.alloc(0) : json(e.details),
      next_retry_delay_ms: Math.max(Math.trunc(e.nextRetryDelayMs || 0), 0),
    },
  };
}

function describe(call, callback) {
  callback(null, {
    activities: Object.keys(registry).sort().map((name) => ({
      name,
      description: registry[name].description,
      input_schema: json(registry[name].input),
      output_schema: json(registry[name].output),
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
  const act = registry[req.activity];
  if (!act) {
    return errorEvent(new ActivityError(`unknown activity "${req.activity}" (have ${JSON.stringify(Object.keys(registry).sort())})`, 'UnknownActivity', true));
  }
  if (req.input.length > MAX_PAYLOAD) {
    return errorEvent(new ActivityError(`input of ${req.activity} is ${req.input.length} bytes, over the ${MAX_PAYLOAD}-byte limit`, 'PayloadTooLarge', true));
  }
  let input = null;
  try {
    if (req.input.length > 0) input = JSON.parse(req.input.toString('utf8'));
  } catch (e) {
    return errorEvent(new ActivityError(`decode input of ${req.activity}: ${e.message}`, 'BadInput', true));
  }
  try {
    const out = json(await act.run(ctx, input));
    if (out.length > MAX_PAYLOAD) {
      return errorEvent(new ActivityError(`output of ${req.activity} is ${out.length} bytes, over the ${MAX_PAYLOAD}-byte limit`, 'PayloadTooLarge', true));
    }
    return { result: { output: out } };
  } catch (e) {
    if (e instanceof ActivityError) return errorEvent(e);
    console.error(`${req.activity} (attempt ${req.attempt}) failed: run=${req.run_id} step=${req.step_path}:`, e);
    return errorEvent(new ActivityError(`${e.name}: ${e.message}`, e.name || 'Error')); // retryable
  }
}

export function serve() {
  const problem = checkHandshake(process.env);
  if (problem) {
    process.stderr.write(problem + '\n');
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

  const protoDir = fileURLToPath(new URL('../proto', import.meta.url));
  const defs = protoLoader.loadSync(['activities.proto', 'health.proto', 'grpc_controller.proto'], {
    includeDirs: [protoDir], keepCase: true, longs: String, defaults: true, oneofs: true,
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
    // After the handshake line, console.log goes to stderr, which wend shows as the plugin's log.
    console.log = console.error;
  });
}

