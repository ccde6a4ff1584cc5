'use strict';
// REST/JSON over HTTP/1.1 with keep-alive. A service answers GET on its
// route (lib/services.js) with its reply as JSON, or an error status with
// {"error": reason}; the gateway keeps an undici connection pool per service.
// Each request carries its deadline in the x-deadline header; a service
// answers 504 to a call it dropped or abandoned at its deadline.
const { Pool } = require('undici');
const config = require('./config');
const { HEADER } = require('./deadline');
const { CallError, NOT_FOUND, INVALID, FAILED, TIMEOUT, kindOf } = require('./errors');
const { createHttpServer, listen } = require('./http-server');
const { parseId } = require('./ids');
const { drained } = require('./lifecycle');
const { throttled } = require('./log');
const { SERVICES, NAMES } = require('./services');

const STATUS = { [NOT_FOUND]: 404, [INVALID]: 400, [FAILED]: 500, [TIMEOUT]: 504 };
// A service's HTTP server answers 408 on a connection that sent no request
// within its HEADERS_TIMEOUT_MS, and closes it. The gateway's pool can hold
// such a connection: one it opened for a call that ended (at its deadline)
// before the connection was up stays idle until the next call takes it,
// which may be just as the server gives up on it. That call was never read,
// so it is sent again, on another connection, a few times at most.
const NOT_READ = 408;
const RESENDS = 3;
const KIND = { 404: NOT_FOUND, 400: INVALID, 504: TIMEOUT };

function serverSettings() {
  return { limits: config.httpLimits() };
}

async function serve(service, handle, addr, { limits }, deadlines) {
  const app = createHttpServer(limits);
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/stats', async () => ({ service: service.name, style: 'rest', deadline: deadlines.stats() }));
  app.get(service.route, async (req, reply) => {
    try {
      const request = {};
      for (const field of service.fields) request[field] = parseId(req.params[field] ?? req.query[field], field);
      // A header sent twice arrives joined, "1, 2": malformed, so the
      // default budget.
      return await handle(request, deadlines.resolve(req.headers[HEADER]));
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
        const options = { method: 'GET', path: pathOf(SERVICES[name], request), headers: { [HEADER]: String(deadline) }, signal };
        let { statusCode, body } = await pools[name].request(options);
        for (let resends = 0; statusCode === NOT_READ && resends < RESENDS; resends++) {
          await body.dump();
          ({ statusCode, body } = await pools[name].request(options));
        }
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
