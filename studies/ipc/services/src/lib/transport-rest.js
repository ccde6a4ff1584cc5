'use strict';
// REST/JSON over HTTP/1.1 with keep-alive. A service answers GET on its
// route (lib/services.js) with its reply as JSON, or an error status with
// {"error": reason}; the gateway keeps an undici connection pool per service.
const { Pool } = require('undici');
const config = require('./config');
const { CallError, NOT_FOUND, INVALID, FAILED, TIMEOUT, kindOf } = require('./errors');
const { createHttpServer, listen } = require('./http-server');
const { parseId } = require('./ids');
const { drained } = require('./lifecycle');
const { throttled } = require('./log');
const { SERVICES, NAMES } = require('./services');

const STATUS = { [NOT_FOUND]: 404, [INVALID]: 400, [FAILED]: 500 };
const KIND = { 404: NOT_FOUND, 400: INVALID };

function serverSettings() {
  return { limits: config.httpLimits() };
}

async function serve(service, handle, addr, { limits }) {
  const app = createHttpServer(limits);
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get(service.route, async (req, reply) => {
    try {
      const request = {};
      for (const field of service.fields) request[field] = parseId(req.params[field] ?? req.query[field], field);
      return await handle(request);
    } catch (err) {
      const kind = kindOf(err);
      if (kind === FAILED) throttled(`${service.name} failed: ${err.message}`);
      return reply.code(STATUS[kind]).send({ error: kind === FAILED ? `${service.name} failed` : err.message });
    }
  });
  await listen(app, addr);
  return { close: () => drained(app.close()) };
}

function clientSettings() {
  return { addrs: Object.fromEntries(NAMES.map((name) => [name, config.addr(`${name.toUpperCase()}_ADDR`)])) };
}

function client({ addrs }) {
  // Unlimited connections per pool, as undici's default: one per request in
  // flight, each kept alive for the next.
  const pools = Object.fromEntries(NAMES.map((name) => [name, new Pool(`http://${addrs[name].text}`)]));
  return {
    ready: () => true,
    stats: () => ({}),
    async call(name, request, deadline) {
      const ms = Math.max(1, deadline - Date.now());
      const signal = AbortSignal.timeout(ms);
      try {
        const { statusCode, body } = await pools[name].request({ method: 'GET', path: pathOf(SERVICES[name], request), signal });
        const data = await body.json();
        if (statusCode === 200) return data;
        throw new CallError(KIND[statusCode] || FAILED, data.error || `answered ${statusCode}`);
      } catch (err) {
        if (err instanceof CallError) throw err;
        if (signal.aborted) throw new CallError(TIMEOUT, `no answer within ${ms} ms`);
        throw new CallError(FAILED, err.code || err.message);
      }
    },
    close: () => Promise.all(Object.values(pools).map((pool) => pool.close())),
  };
}

// pathOf fills the route's :fields and puts the others in the query.
function pathOf(service, request) {
  const query = [];
  let path = service.route;
  for (const field of service.fields) {
    if (path.includes(`:${field}`)) path = path.replace(`:${field}`, String(request[field]));
    else query.push(`${field}=${request[field]}`);
  }
  return query.length ? `${path}?${query.join('&')}` : path;
}

module.exports = { serverSettings, serve, clientSettings, client };
