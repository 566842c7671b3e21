// wend-plugin: write wend activities in Node.js.
export { activity, serve, checkHandshake, PROTOCOL_VERSION, VERSION } from './lib/server.js';
export { ActivityError, RetryableError, NonRetryable, CancelledError } from './lib/errors.js';
