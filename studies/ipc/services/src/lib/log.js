'use strict';
// One line per event on stderr, prefixed with the program and its style, so
// that the logs of eighteen processes can be read side by side.

let prefix = 'ipc';

function setPrefix(name, style) {
  prefix = `${name}/${style}`;
}

function log(message) {
  process.stderr.write(`${new Date().toISOString()} ${prefix}: ${message}\n`);
}

// throttled logs an event that may repeat per request (a store that is
// down fails every call): a new message at once, the same one at most every
// QUIET_MS, with how often it happened meanwhile.
const QUIET_MS = 10_000;
const last = { message: '', at: 0, repeats: 0 };

function throttled(message) {
  const now = Date.now();
  if (message === last.message && now - last.at < QUIET_MS) {
    last.repeats++;
    return;
  }
  const repeats = message === last.message && last.repeats > 0 ? ` (${last.repeats} more since the last line)` : '';
  Object.assign(last, { message, at: now, repeats: 0 });
  log(message + repeats);
}

module.exports = { log, throttled, setPrefix };
