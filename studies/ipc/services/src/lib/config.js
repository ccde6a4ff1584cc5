'use strict';
// Reads the environment the study sets (README.md lists it). A missing or
// malformed value stops the program at once with a line naming the
// variable, instead of surfacing later as a confusing runtime error.

const STYLES = ['rest', 'grpc', 'amqp'];

class ConfigError extends Error {}

function required(name) {
  const value = process.env[name];
  if (value === undefined || value === '') throw new ConfigError(`${name} is not set`);
  return value;
}

function style() {
  const value = required('STYLE');
  if (!STYLES.includes(value)) throw new ConfigError(`STYLE must be one of ${STYLES.join(', ')}, got ${JSON.stringify(value)}`);
  return value;
}

// addr reads host:port; the host may be a name, an IPv4 address or [IPv6].
function addr(name) {
  const value = required(name);
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/.exec(value);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw new ConfigError(`${name} must be host:port, got ${JSON.stringify(value)}`);
  return { text: value, host: m[1].replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}

function int(name, fallback, min, max) {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  if (!/^[0-9]+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

function url(name, scheme) {
  const value = required(name);
  let parsed;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(`${name} is not a URL`); // the value may hold a password: not echoed
  }
  if (parsed.protocol !== `${scheme}:`) throw new ConfigError(`${name} must be a ${scheme}:// URL`);
  return value;
}

// httpLimits bound what one client can hold of an HTTP server: the time to
// send its headers and its whole request, an idle keep-alive connection, and
// the body, which no route of these APIs reads.
function httpLimits() {
  const headersTimeout = int('HEADERS_TIMEOUT_MS', 10_000, 100, 600_000);
  const requestTimeout = int('REQUEST_TIMEOUT_MS', 30_000, headersTimeout, 600_000);
  return {
    headersTimeout,
    requestTimeout,
    keepAliveTimeout: int('KEEP_ALIVE_TIMEOUT_MS', 5_000, 100, 600_000),
    maxBody: int('MAX_BODY_BYTES', 16_384, 0, 1 << 30),
  };
}

// grpcLimits bound what one client can hold of a gRPC server, with the
// HTTP servers' values where they mean the same: the time for a call's
// whole request to come (REQUEST_TIMEOUT_MS) and how long an idle
// connection is kept (KEEP_ALIVE_TIMEOUT_MS); and how long any connection
// is kept, however busy, before its client is asked to open another.
function grpcLimits() {
  const { requestTimeout, keepAliveTimeout } = httpLimits();
  return {
    arrivalMs: requestTimeout,
    idleMs: keepAliveTimeout,
    ageMs: int('MAX_CONNECTION_AGE_MS', 600_000, 1000, 86_400_000),
  };
}

module.exports = { ConfigError, style, addr, int, url, httpLimits, grpcLimits };
