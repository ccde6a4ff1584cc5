'use strict';
// The product page: which request it is, the five calls made at once, and
// the page or error composed from their outcomes, with a Server-Timing
// entry per call and one for the composition.
const { performance } = require('node:perf_hooks');
const { defaultCustomer } = require('./catalogue');
const { CallError, NOT_FOUND, FAILED, TIMEOUT } = require('./errors');
const { parseId } = require('./ids');
const { SERVICES, NAMES } = require('./services');

// parsePage reads GET /products/<idText>?customer=N; it throws an invalid
// CallError saying what is wrong.
function parsePage(idText, query) {
  const product = parseId(idText, 'the product id');
  const customer = query.customer === undefined ? defaultCustomer(product) : parseId(query.customer, 'customer');
  return { product, customer };
}

// render calls every service before the deadline and resolves to the page's
// status, JSON body and Server-Timing, and each call's outcome kind.
async function render(client, page, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  const outcomes = await Promise.all(NAMES.map(async (name) => {
    const began = performance.now();
    const request = Object.fromEntries(SERVICES[name].fields.map((field) => [field, page[field]]));
    try {
      const value = await client.call(name, request, deadline);
      return { name, value, dur: performance.now() - began };
    } catch (err) {
      const error = err instanceof CallError ? err : new CallError(FAILED, err.message);
      return { name, error, dur: performance.now() - began };
    }
  }));
  const began = performance.now();
  const { status, body } = compose(outcomes);
  const json = JSON.stringify(body);
  const timing = outcomes.map((o) => `${o.name};dur=${o.dur.toFixed(2)}`);
  timing.push(`compose;dur=${(performance.now() - began).toFixed(2)}`);
  return { status, json, timing: timing.join(', '), kinds: outcomes.map((o) => [o.name, o.error ? o.error.kind : 'ok']) };
}

// Whose "not found" a 404 gives first: the product's, then the customer's.
const MISSING_FIRST = ['product', 'cart', ...NAMES];

// compose makes the page from five answers. A part the data says does not
// exist makes the page a 404; any other failure a 502, or a 504 if a part
// did not answer in time.
function compose(outcomes) {
  const failed = outcomes.filter((o) => o.error);
  if (failed.length === 0) return { status: 200, body: Object.fromEntries(outcomes.map((o) => [o.name, o.value])) };
  const missing = MISSING_FIRST.map((name) => failed.find((o) => o.name === name && o.error.kind === NOT_FOUND)).find(Boolean);
  if (missing) return { status: 404, body: { error: missing.error.message } };
  const late = failed.some((o) => o.error.kind === TIMEOUT);
  return {
    status: late ? 504 : 502,
    body: {
      error: `${failed.map((o) => o.name).join(', ')} ${late ? 'did not all answer in time' : 'failed'}`,
      failed: Object.fromEntries(failed.map((o) => [o.name, o.error.message])),
    },
  };
}

module.exports = { parsePage, render };
