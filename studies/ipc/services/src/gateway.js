'use strict';
// The API gateway: GET /products/:id?customer=N calls the five services in
// parallel, in the style STYLE names, and composes the product page.
const config = require('./lib/config');
const { createHttpServer, listen } = require('./lib/http-server');
const { drained, run } = require('./lib/lifecycle');
const { parsePage, render } = require('./lib/page');
const { NAMES } = require('./lib/services');
const { transport } = require('./lib/transports');

run('gateway', async () => {
  const style = config.style();
  const addr = config.addr('ADDR');
  const timeoutMs = config.int('CALL_TIMEOUT_MS', 3000, 1, 600_000);
  const limits = config.httpLimits();
  const wire = transport(style);
  const client = await wire.client(wire.clientSettings(addr));

  const stats = { pages: {}, calls: Object.fromEntries(NAMES.map((name) => [name, {}])) };
  const count = (counts, key) => {
    counts[key] = (counts[key] || 0) + 1;
  };

  const app = createHttpServer(limits);
  app.get('/healthz', async (req, reply) => (client.ready() ? { status: 'ok' } : reply.code(503).send({ error: 'not connected to the broker' })));
  // Counters since start, for a study to read after a run: pages by status,
  // calls by service and outcome, and the transport's own.
  app.get('/stats', async () => ({ style, ...stats, transport: client.stats() }));
  app.get('/products/*', async (req, reply) => {
    let page;
    try {
      page = parsePage(req.params['*'], req.query);
    } catch (err) {
      count(stats.pages, 400);
      return reply.code(400).send({ error: err.message });
    }
    const result = await render(client, page, timeoutMs);
    count(stats.pages, result.status);
    for (const [name, kind] of result.kinds) count(stats.calls[name], kind);
    return reply.code(result.status).header('server-timing', result.timing)
      .type('application/json; charset=utf-8').send(result.json);
  });
  await listen(app, addr);
  return async () => {
    await drained(app.close());
    await client.close();
  };
});
