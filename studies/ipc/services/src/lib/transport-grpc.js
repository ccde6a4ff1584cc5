'use strict';
// gRPC/protobuf with @grpc/grpc-js: one .proto per service (../../proto),
// one unary method each, and a deadline on every call. A malformed request
// (bytes that are not the request message) is answered by grpc-js with an
// error status before it reaches the handler.
//
// The call's deadline travels as gRPC's grpc-timeout, which is relative:
// the server counts it from when it reads the call, so time the call spent
// in a busy or stopped server's socket does not count. The gateway also
// sends the absolute deadline as x-deadline metadata, and a service keeps
// the earlier of the two.
const http2 = require('node:http2');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { CallError, NOT_FOUND, INVALID, FAILED, TIMEOUT, kindOf } = require('./errors');
const { drained } = require('./lifecycle');
const { checkId } = require('./ids');
const { throttled } = require('./log');
const config = require('./config');
const { HEADER, settings: deadlineSettings } = require('./deadline');
const { SERVICES, NAMES } = require('./services');

const PROTO_DIR = path.join(__dirname, '..', '..', 'proto');
// Messages as plain objects with the .proto's field names, every field
// present (proto3 leaves defaults off the wire), so a reply reads the same
// as the REST and AMQP styles' JSON.
const LOAD_OPTIONS = { keepCase: true, longs: Number, enums: String, defaults: true, arrays: true };
const STATUS = {
  [NOT_FOUND]: grpc.status.NOT_FOUND, [INVALID]: grpc.status.INVALID_ARGUMENT, [FAILED]: grpc.status.INTERNAL, [TIMEOUT]: grpc.status.DEADLINE_EXCEEDED,
};
const KIND = { [grpc.status.NOT_FOUND]: NOT_FOUND, [grpc.status.INVALID_ARGUMENT]: INVALID, [grpc.status.DEADLINE_EXCEEDED]: TIMEOUT };
// A request is a few bytes; anything much larger is not one.
const MAX_MESSAGE = 16_384;
// The most calls one connection may have open at once: a client past it
// waits for a call to end. The gateway sends all its calls to a service
// over one connection, up to as many at once as the study's heaviest loads
// (400 users, a flood of 400 pages timing out), so the bound is well above
// that. Without one, a client could open calls without end, each holding
// some 6 KB: 20,000 half-sent calls took shipping from 78 to 202 MiB.
const MAX_STREAMS = 1000;
// grpc-js backs off up to 120 s between reconnects by default; a restarted
// service would then wait that long for the gateway to notice it.
const CHANNEL_OPTIONS = { 'grpc.initial_reconnect_backoff_ms': 100, 'grpc.max_reconnect_backoff_ms': 1000 };

function stubClass(service) {
  const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(path.join(PROTO_DIR, `${service.name}.proto`), LOAD_OPTIONS));
  return service.grpc.service.split('.').reduce((scope, name) => scope[name], pkg);
}

function serverSettings() {
  // A connection past its age is asked to go; its calls still under way
  // get the longest time a call may take before it is cut.
  return { limits: config.grpcLimits(), graceMs: deadlineSettings().maxMs };
}

function serverOptions({ limits, graceMs }) {
  return {
    'grpc.max_receive_message_length': MAX_MESSAGE,
    'grpc.max_concurrent_streams': MAX_STREAMS,
    'grpc.max_connection_idle_ms': limits.idleMs,
    'grpc.max_connection_age_ms': limits.ageMs,
    'grpc.max_connection_age_grace_ms': graceMs,
    // Channelz keeps a record of every connection and call, which
    // nothing here reads.
    'grpc.enable_channelz': 0,
  };
}

// boundArrivals resets every stream of server whose request has not all
// come (its message and the end of the client's side) within ms of its
// headers, as the HTTP servers' request timeout does. grpc-js has no such
// bound: it waits for the rest of a call forever (a call need not name a
// deadline), and a call it has answered stays open, holding its stream,
// until the client ends its side. grpc-js keeps its Node HTTP/2 servers in
// a private map; its version is pinned, and apitest's gRPC exhaustion
// check fails if this stops working.
function boundArrivals(server, ms) {
  const http2Servers = server.http2Servers;
  if (!(http2Servers instanceof Map) || http2Servers.size === 0) {
    throw new Error('grpc-js keeps its HTTP/2 servers elsewhere than before: no bound on the time a request takes to arrive');
  }
  for (const http2Server of http2Servers.keys()) {
    http2Server.on('stream', (stream) => {
      const timer = setTimeout(() => {
        if (!stream.destroyed && !stream.state.remoteClose) stream.close(http2.constants.NGHTTP2_CANCEL);
      }, ms);
      stream.once('close', () => clearTimeout(timer));
    });
  }
}

// deadlineOf is the deadline a call names: gRPC's own (Infinity when the
// client set none) and the x-deadline metadata, if given once.
function deadlineOf(call, deadlines) {
  const own = call.getDeadline();
  const ms = own instanceof Date ? own.getTime() : own;
  const values = call.metadata.get(HEADER);
  return deadlines.resolve(Number.isFinite(ms) ? Math.floor(ms) : undefined, values.length === 1 ? values[0] : undefined);
}

async function serve(service, handle, addr, settings, deadlines) {
  const server = new grpc.Server(serverOptions(settings));
  server.addService(stubClass(service).service, {
    [service.grpc.method]: (call, callback) => {
      const answer = async () => {
        const request = {};
        for (const field of service.fields) request[field] = checkId(call.request[field], field);
        // Cancelled already: the client gave up (at its deadline) while
        // the call waited to be read.
        if (call.cancelled) throw deadlines.drop('the call was cancelled before it was served');
        return handle(request, deadlineOf(call, deadlines));
      };
      answer().then(
        (reply) => callback(null, reply),
        (err) => {
          const kind = kindOf(err);
          if (kind === FAILED) throttled(`${service.name} failed: ${err.message}`);
          callback({ code: STATUS[kind], details: kind === FAILED ? `${service.name} failed` : err.message });
        },
      );
    },
  });
  await new Promise((resolve, reject) => {
    server.bindAsync(addr.text, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve()));
  });
  boundArrivals(server, settings.limits.arrivalMs);
  return {
    async close() {
      await drained(new Promise((resolve) => server.tryShutdown(resolve)));
      server.forceShutdown();
    },
  };
}

function clientSettings() {
  return { addrs: Object.fromEntries(NAMES.map((name) => [name, config.addr(`${name.toUpperCase()}_ADDR`)])) };
}

function client({ addrs }) {
  const stubs = Object.fromEntries(NAMES.map((name) => {
    const Stub = stubClass(SERVICES[name]);
    return [name, new Stub(addrs[name].text, grpc.credentials.createInsecure(), CHANNEL_OPTIONS)];
  }));
  return {
    ready: () => true,
    stats: () => ({}),
    call(name, request, deadline) {
      const stub = stubs[name];
      return new Promise((resolve, reject) => {
        const metadata = new grpc.Metadata();
        metadata.set(HEADER, String(deadline));
        stub[SERVICES[name].grpc.method](request, metadata, { deadline }, (err, reply) => {
          if (!err) resolve(reply);
          else reject(new CallError(KIND[err.code] || FAILED, err.details || err.message));
        });
      });
    },
    async close() {
      for (const stub of Object.values(stubs)) stub.close();
    },
  };
}

module.exports = { serverSettings, serve, clientSettings, client };
