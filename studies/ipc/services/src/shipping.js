'use strict';
// Shipping: how a product can be sent to a customer, at what price, and when
// it would arrive. In MariaDB: each product's parcel, each customer's zone,
// and the rates of each zone; the price is the rate's base plus its price
// per started kilogram.
const mysql = require('mysql2');
const catalogue = require('./lib/catalogue');
const config = require('./lib/config');
const { CallError, TIMEOUT, notFound } = require('./lib/errors');
const { log } = require('./lib/log');
const { serve } = require('./lib/serve');

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS shipping_parcels (
    product_id INT UNSIGNED PRIMARY KEY,
    weight_grams INT UNSIGNED NOT NULL,
    handling_days TINYINT UNSIGNED NOT NULL,
    warehouse VARCHAR(32) NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS shipping_customer_zones (
    customer_id INT UNSIGNED PRIMARY KEY,
    zone VARCHAR(16) NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS shipping_rates (
    zone VARCHAR(16) NOT NULL,
    carrier VARCHAR(32) NOT NULL,
    service VARCHAR(32) NOT NULL,
    base_cents INT UNSIGNED NOT NULL,
    per_kg_cents INT UNSIGNED NOT NULL,
    days_min TINYINT UNSIGNED NOT NULL,
    days_max TINYINT UNSIGNED NOT NULL,
    PRIMARY KEY (zone, carrier, service))`,
  `CREATE TABLE IF NOT EXISTS shipping_seeds (
    name VARCHAR(32) PRIMARY KEY,
    version INT UNSIGNED NOT NULL,
    products INT UNSIGNED NOT NULL)`,
];

const OPTIONS = `SELECT z.zone, p.warehouse, r.carrier, r.service,
    r.base_cents + r.per_kg_cents * ((p.weight_grams + 999) DIV 1000) AS price_cents,
    p.handling_days + r.days_min AS days_min, p.handling_days + r.days_max AS days_max
  FROM shipping_parcels p
  JOIN shipping_customer_zones z ON z.customer_id = ?
  JOIN shipping_rates r ON r.zone = z.zone
  WHERE p.product_id = ?
  ORDER BY price_cents, r.carrier, r.service`;

const BATCH = 500;
const DAY_MS = 86_400_000;
// MariaDB connections, and so queries at once: as with the Mongo pool
// (lib/mongo-store.js), the bound keeps waiting calls in the service's
// gate, where the stale ones are dropped, not in mysql2's queue.
const POOL = 10;

serve('shipping', {
  settings: () => ({ url: config.url('MYSQL_URL', 'mysql') }),
  async open({ url }, products, deadlines) {
    const pool = mysql.createPool({ uri: url, connectionLimit: POOL, connectTimeout: 2000 });
    await seed(pool.promise(), products);
    const gate = deadlines.gate(POOL);
    return {
      async handle({ product, customer }, deadline) {
        const rows = await gate.run(deadline, (ms) => execute(pool, OPTIONS, [customer, product], ms));
        if (rows.length === 0) throw notFound(`no shipping of product ${product} to customer ${customer}`);
        const today = Date.now();
        return {
          product,
          customer,
          zone: rows[0].zone,
          ships_from: rows[0].warehouse,
          options: rows.map((r) => ({
            carrier: r.carrier,
            service: r.service,
            price_cents: Number(r.price_cents),
            earliest: dayAfter(today, r.days_min),
            latest: dayAfter(today, r.days_max),
          })),
        };
      },
      close: () => pool.promise().end(),
    };
  },
});

// execute runs a prepared statement on a connection of pool with mysql2's
// query timeout of ms, the time the call has left. The answer comes at the
// timeout at the latest, but the connection is busy until the statement
// ends, so it goes back to the pool only then, and done says when: the gate
// holds the call's slot until done, so that no query waits in mysql2's
// queue behind one that timed out.
function execute(pool, sql, params, ms) {
  let finished;
  const done = new Promise((resolve) => {
    finished = resolve;
  });
  const answer = new Promise((resolve, reject) => {
    pool.getConnection((err, conn) => {
      if (err) {
        finished();
        reject(err);
        return;
      }
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        conn.release();
        finished();
      };
      try {
        conn.execute({ sql, timeout: ms }, params, (queryErr, rows) => {
          if (!queryErr) resolve(rows);
          else if (queryErr.code === 'PROTOCOL_SEQUENCE_TIMEOUT') {
            reject(new CallError(TIMEOUT, `the store did not answer within ${ms} ms, the time left`));
            return; // the statement still runs: 'end' releases the connection
          } else reject(queryErr);
          // A fatal error ends the connection without 'end'.
          if (queryErr && queryErr.fatal) release();
        }).once('end', release);
      } catch (syncErr) {
        release();
        reject(syncErr);
      }
    });
  });
  return { answer, done };
}

// dayAfter is the UTC date days after the day of time, as YYYY-MM-DD.
function dayAfter(time, days) {
  return new Date(time + days * DAY_MS).toISOString().slice(0, 10);
}

// seed creates and fills the tables unless they hold this version's data
// for as many products. Instances seeding at once insert the same rows, of
// which INSERT IGNORE keeps one.
async function seed(pool, products) {
  for (const statement of SCHEMA) await pool.query(statement);
  const [[marker]] = await pool.query('SELECT version, products FROM shipping_seeds WHERE name = ?', ['catalogue']);
  if (marker && marker.version === catalogue.VERSION && marker.products === products) return;
  const began = Date.now();
  const parcels = catalogue.ids(products).map(catalogue.parcel);
  await insertIgnore(pool, 'shipping_parcels', parcels);
  await insertIgnore(pool, 'shipping_customer_zones', catalogue.ids(catalogue.CUSTOMERS).map(catalogue.customerZone));
  await insertIgnore(pool, 'shipping_rates', catalogue.rates());
  await pool.query('REPLACE INTO shipping_seeds (name, version, products) VALUES (?, ?, ?)', ['catalogue', catalogue.VERSION, products]);
  log(`seeded the shipping tables for ${products} products in ${Date.now() - began} ms`);
}

async function insertIgnore(pool, table, rows) {
  const columns = Object.keys(rows[0]);
  for (let i = 0; i < rows.length; i += BATCH) {
    const batch = rows.slice(i, i + BATCH).map((row) => columns.map((c) => row[c]));
    await pool.query(`INSERT IGNORE INTO ${table} (${columns.join(', ')}) VALUES ?`, [batch]);
  }
}
