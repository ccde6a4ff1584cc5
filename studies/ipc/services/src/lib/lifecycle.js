'use strict';
// Start-up and shutdown shared by every program. A program's start returns
// its close function; SIGTERM (or SIGINT) runs it and the process exits
// within EXIT_MS even if close hangs, because the lab kills a program that
// is still there 2 s after SIGTERM.
const { ConfigError } = require('./config');
const { log, setPrefix } = require('./log');

const EXIT_MS = 1400;
// What in-flight requests get to finish before connections are cut.
const DRAIN_MS = 1000;

function run(name, start) {
  // The prefix only: start checks STYLE with the rest of the environment.
  setPrefix(name, process.env.STYLE || 'no-style');
  let close = null;
  let stopping = false;
  const stop = (signal) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: shutting down`);
    if (!close) process.exit(0); // still starting: nothing in flight to finish
    setTimeout(() => {
      log(`still closing after ${EXIT_MS} ms: exiting anyway`);
      process.exit(0);
    }, EXIT_MS).unref();
    close().then(
      () => process.exit(0),
      (err) => {
        log(`shutdown: ${err.message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  const began = Date.now();
  start().then(
    (fn) => {
      close = fn;
      log(`ready in ${Date.now() - began} ms`);
    },
    (err) => {
      log(err instanceof ConfigError ? `configuration: ${err.message}` : `start failed: ${err.stack || err}`);
      process.exit(err instanceof ConfigError ? 2 : 1);
    },
  );
}

// drained resolves once promise settles or DRAIN_MS have passed.
function drained(promise) {
  return Promise.race([promise, new Promise((resolve) => setTimeout(resolve, DRAIN_MS).unref())]);
}

module.exports = { run, drained };
