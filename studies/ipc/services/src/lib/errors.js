'use strict';
// The outcomes a call can have besides an answer. The same kinds travel over
// every style (an HTTP status, a gRPC status code, a field of an AMQP
// reply), so the gateway decides a page's status from the kind alone.

const NOT_FOUND = 'not_found'; // the data says no such thing: the page is a 404
const INVALID = 'invalid'; // the request is malformed: a 400
const FAILED = 'failed'; // the service or its store failed: a 502
const TIMEOUT = 'timeout'; // no answer by the deadline: a 504

class CallError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

const notFound = (message) => new CallError(NOT_FOUND, message);
const invalid = (message) => new CallError(INVALID, message);

// kindOf tells a known outcome from an unexpected error, which counts as a
// failure whose message may name internals only in the service's own log.
function kindOf(err) {
  return err instanceof CallError ? err.kind : FAILED;
}

module.exports = { CallError, NOT_FOUND, INVALID, FAILED, TIMEOUT, notFound, invalid, kindOf };
