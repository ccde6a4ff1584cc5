'use strict';
// The HTTP server every program uses (the gateway, the REST services, the
// AMQP services' health endpoint): Fastify on Node's http server with every
// limit a client could otherwise abuse, and errors as JSON {"error": ...}.
const fastify = require('fastify');
const { log } = require('./log');

// How often Node looks for connections past their header or request
// timeout; its default, 30 s, would let a slow client outstay a 1 s limit.
const TIMEOUT_CHECK_MS = 250;
// The most requests one connection may have under way. Node's server starts
// every request it reads, pipelined ones too, without waiting for the
// answers before: 2,000 GETs in one send made the gateway compose 2,000
// pages at once, 10,000 calls, over its memory cap. No client of these
// programs pipelines (the load generator and the gateway's pools wait for
// each answer), so only a flood reaches the bound; what it sends beyond
// is answered 503 at once, in order, behind the requests under way.
const MAX_IN_FLIGHT = 16;
const IN_FLIGHT = Symbol('requests under way on this connection');

function createHttpServer(limits) {
  const app = fastify({
    logger: false,
    http: {
      headersTimeout: limits.headersTimeout,
      connectionsCheckingInterval: TIMEOUT_CHECK_MS,
      maxHeaderSize: 16_384,
    },
    requestTimeout: limits.requestTimeout,
    keepAliveTimeout: limits.keepAliveTimeout,
    bodyLimit: Math.max(limits.maxBody, 1),
    // Long ids get to the handler, which says what is wrong with them,
    // instead of a bare "no route".
    routerOptions: { maxParamLength: 1000 },
    // A URL Fastify cannot route (%zz, a parameter over maxParamLength)
    // gets the same JSON as any other error.
    frameworkErrors: (err, req, reply) => reply.code(err.statusCode || 400).send({ error: err.message }),
  });
  app.addHook('onRequest', bodyGuard(limits.maxBody));
  app.addHook('onRequest', inFlightBound(MAX_IN_FLIGHT));
  // The guard has read any body to its end already: a parser of Fastify's
  // would wait for data that has all gone by, and the request, complete,
  // would outlast the request timeout unanswered. No route takes a body,
  // so every content type is passed on without one, to be answered as
  // its route (or the lack of one) says.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (req, payload, done) => done(null));
  app.setErrorHandler((err, req, reply) => {
    const status = err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    if (status >= 500) log(`error on ${req.method} ${req.routeOptions.url}: ${err.stack || err}`);
    reply.code(status).send({ error: status >= 500 ? 'internal error' : err.message });
  });
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send({ error: `no route for ${req.method} ${req.url.length > 100 ? `${req.url.slice(0, 100)}…` : req.url}` });
  });
  return app;
}

// bodyGuard reads and discards a request body, which no route here takes,
// up to maxBody bytes, and answers 413 past that. Fastify reads no body for
// GET, so without this a GET could stream any amount into the connection.
// Reading it to its end, rather than answering at once, keeps the
// connection usable and lets the request timeout end a body that never
// comes.
function bodyGuard(maxBody) {
  const tooLarge = (reply) => reply.code(413).header('connection', 'close')
    .send({ error: `request body over ${maxBody} bytes` });
  return (req, reply, done) => {
    const { headers } = req.raw;
    const length = headers['content-length'];
    if (headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) {
      done();
      return;
    }
    if (Number(length) > maxBody) {
      tooLarge(reply);
      return;
    }
    let seen = 0;
    req.raw.on('data', (chunk) => {
      seen += chunk.length;
      if (seen > maxBody && !reply.sent) tooLarge(reply);
    });
    req.raw.on('end', () => {
      if (!reply.sent) done();
    });
  };
}

// inFlightBound answers 503 to a request while max others of its connection
// are under way (until each answer is written).
function inFlightBound(max) {
  return (req, reply, done) => {
    const { socket } = req.raw;
    const under = socket[IN_FLIGHT] || 0;
    if (under >= max) {
      reply.code(503).header('retry-after', '1')
        .send({ error: `${max} requests of this connection are under way already: send one at a time` });
      return;
    }
    socket[IN_FLIGHT] = under + 1;
    reply.raw.once('close', () => {
      socket[IN_FLIGHT]--;
    });
    done();
  };
}

async function listen(app, addr) {
  await app.listen({ host: addr.host, port: addr.port });
}

module.exports = { createHttpServer, listen };
