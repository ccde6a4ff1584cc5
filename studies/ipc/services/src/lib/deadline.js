'use strict';
// Deadlines on the service side. Every call carries the absolute deadline
// its caller set (the gateway's page deadline, ms since the epoch: the
// x-deadline header in REST and AMQP, x-deadline metadata beside the gRPC
// deadline), so a service knows when an answer stops being of use. Work
// past that is dropped: a call whose deadline has passed never reaches the
// store, and a store query is bounded by the time left. Without this, an
// overload leaves every service a backlog of calls its callers gave up on,
// which it then executes one by one against the store while fresh calls
// wait behind them, so the overload outlives its cause.
//
// Within a service, store work goes through a gate of as many slots as the
// store client has connections; calls beyond that wait in the gate's queue,
// where one whose deadline passes is dropped. The queue is the service's,
// not the store driver's: a call waiting for a connection inside the driver
// could not be taken back, and would run however stale once its turn came.
const config = require('./config');
const { CallError, TIMEOUT } = require('./errors');
const { log } = require('./log');

// The header (REST, AMQP) or metadata key (gRPC) of a call's deadline,
// written as ms since the epoch, digits only.
const HEADER = 'x-deadline';
const DEADLINE_TEXT = /^[0-9]{1,15}$/;
// How often at most a summary of dropped calls is logged.
const REPORT_MS = 1000;

function settings() {
  return {
    // The budget of a call that names no usable deadline (no header, or a
    // malformed one): the gateway's default CALL_TIMEOUT_MS.
    fallbackMs: config.int('DEADLINE_DEFAULT_MS', 3000, 1, 600_000),
    // The most time a call may have from its arrival, whatever deadline it
    // names: a client cannot make a service hold a store connection for
    // a year, and a clock far ahead of this one is cut short too.
    maxMs: config.int('DEADLINE_MAX_MS', 30_000, 1, 600_000),
  };
}

// parse reads one deadline as sent: ms since the epoch, a non-negative
// integer, as a number (AMQP headers) or text (HTTP headers, gRPC
// metadata). Anything else is undefined.
function parse(value) {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value === 'bigint') return value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : undefined;
  if (typeof value === 'string' && DEADLINE_TEXT.test(value)) return Number(value);
  return undefined;
}

function expired(message) {
  return new CallError(TIMEOUT, message);
}

// deadlines makes a service's deadline policy and its counters:
//   resolve(...candidates) the deadline of a call from what its wire says;
//   drop(reason) counts a call dropped before reaching the gate;
//   gate(slots) bounds store work and drops what waits too long;
//   stats() the counters, for /stats.
function deadlines({ fallbackMs, maxMs }) {
  const counts = { dropped: 0, abandoned: 0 };
  const gates = [];
  let reported = { dropped: 0, abandoned: 0 };
  let report = null;

  // Counted drops are summed up in one log line a second at most, so that
  // every style, gRPC included, says in its log what it dropped.
  const noteDrop = (kind) => {
    counts[kind]++;
    if (report) return;
    report = setTimeout(() => {
      report = null;
      const dropped = counts.dropped - reported.dropped;
      const abandoned = counts.abandoned - reported.abandoned;
      reported = { ...counts };
      log(`past their deadline: ${dropped} calls dropped before the store, ${abandoned} abandoned to it `
        + `(since start: dropped ${counts.dropped}, abandoned ${counts.abandoned})`);
    }, REPORT_MS);
    report.unref();
  };

  return {
    // resolve takes what a call's wire says of its deadline, each value
    // possibly missing or malformed (a hostile client), and returns the
    // earliest valid one, no later than maxMs from now; with none valid,
    // fallbackMs from now.
    resolve(...candidates) {
      const now = Date.now();
      let deadline = Infinity;
      for (const c of candidates) {
        const d = parse(c);
        if (d !== undefined && d < deadline) deadline = d;
      }
      if (deadline === Infinity) deadline = now + fallbackMs;
      return Math.min(deadline, now + maxMs);
    },

    // drop counts a call dropped by the transport itself (its caller has
    // gone) and returns the error to answer it with.
    drop(message = 'the deadline passed before the call was served') {
      noteDrop('dropped');
      return expired(message);
    },

    gate(slots) {
      const g = gate(slots, noteDrop);
      gates.push(g);
      return g;
    },

    stats() {
      return {
        ...counts,
        waiting: gates.reduce((n, g) => n + g.waiting(), 0),
        busy: gates.reduce((n, g) => n + g.busy(), 0),
        default_ms: fallbackMs,
        max_ms: maxMs,
      };
    },
  };
}

// gate runs store work, at most slots at a time, each call before its
// deadline. run(deadline, work) calls work(ms), ms being the time left,
// which returns {answer, done}: answer, the promise of the reply; done,
// settled once the store is through with the call (its connection free),
// which may be later than the answer (a query that timed out on the client
// side). The slot is held until done, so the gate's bound is the store's.
// run resolves with the answer, or rejects with a timeout at the deadline:
// at once if it has passed, when it passes while the call waits for a slot
// (dropped: the store never sees it), or when the store has not answered
// by then (abandoned).
function gate(slots, noteDrop) {
  let busy = 0;
  let waiting = 0;
  let queue = [];
  let head = 0;

  const start = (call) => {
    busy++;
    let settled = false;
    const settle = (fn, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn(value);
    };
    const ms = Math.max(1, call.deadline - Date.now());
    const timer = setTimeout(() => {
      noteDrop('abandoned');
      settle(call.reject, expired(`the store did not answer within ${ms} ms, the time left`));
    }, ms);
    let answer;
    let done;
    try {
      ({ answer, done } = call.work(ms));
    } catch (err) {
      answer = Promise.reject(err);
      done = answer;
    }
    answer.then((value) => settle(call.resolve, value), (err) => {
      // The store's own bound (maxTimeMS, a query timeout) counts as the
      // gate's timer would have.
      if (!settled && err instanceof CallError && err.kind === TIMEOUT) noteDrop('abandoned');
      settle(call.reject, err);
    });
    const release = () => {
      busy--;
      next();
    };
    done.then(release, release);
  };

  const next = () => {
    while (busy < slots && head < queue.length) {
      const call = queue[head];
      queue[head++] = undefined;
      if (call.gone) continue;
      clearTimeout(call.timer);
      waiting--;
      if (call.deadline <= Date.now()) {
        noteDrop('dropped');
        call.reject(expired('the deadline passed while the call waited for the store'));
        continue;
      }
      start(call);
    }
    if (head > 1024 && head * 2 > queue.length) {
      queue = queue.slice(head);
      head = 0;
    }
  };

  return {
    run(deadline, work) {
      return new Promise((resolve, reject) => {
        const call = { deadline, work, resolve, reject, timer: null, gone: false };
        const left = deadline - Date.now();
        if (left <= 0) {
          noteDrop('dropped');
          reject(expired('the deadline passed before the call was served'));
          return;
        }
        if (busy < slots) {
          start(call);
          return;
        }
        call.timer = setTimeout(() => {
          call.gone = true;
          waiting--;
          // A store that hangs frees no slot: drop what timed out of the
          // queue now and then, lest it grow with the hang.
          if (queue.length - head > 1024 && waiting * 2 < queue.length - head) {
            queue = queue.slice(head).filter((c) => !c.gone);
            head = 0;
          }
          noteDrop('dropped');
          reject(expired('the deadline passed while the call waited for the store'));
        }, left);
        queue.push(call);
        waiting++;
      });
    },
    busy: () => busy,
    waiting: () => waiting,
  };
}

module.exports = { HEADER, settings, deadlines, parse };
