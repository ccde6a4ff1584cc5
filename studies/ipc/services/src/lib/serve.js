'use strict';
// The main program of a data service: read the environment, open and seed
// the store, then serve the service in the style STYLE names. Only once
// the store is ready does the program listen on ADDR.
const config = require('./config');
const { deadlines: makeDeadlines, settings: deadlineSettings } = require('./deadline');
const { run } = require('./lifecycle');
const { SERVICES } = require('./services');
const { transport } = require('./transports');

const MAX_PRODUCTS = 1_000_000;

// store: settings() reads its environment; open(settings, products,
// deadlines) connects and seeds, and returns handle(request, deadline),
// which answers before the deadline (ms since the epoch) or fails with a
// timeout, and close().
function serve(name, store) {
  run(name, async () => {
    const style = config.style();
    const addr = config.addr('ADDR');
    const products = config.int('PRODUCTS', 1000, 1, MAX_PRODUCTS);
    const wire = transport(style);
    const serverSettings = wire.serverSettings();
    const deadlines = makeDeadlines(deadlineSettings());
    const data = await store.open(store.settings(), products, deadlines);
    const server = await wire.serve(SERVICES[name], data.handle, addr, serverSettings, deadlines);
    return async () => {
      await server.close();
      await data.close();
    };
  });
}

module.exports = { serve };
