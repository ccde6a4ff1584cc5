'use strict';
// A service whose data is one document per key in a MongoDB-wire store
// (FerretDB in the lab), in a database of its own. Lookups are by a string
// _id because that is the filter FerretDB answers from its index; most
// others it filters in its own process, document by document.
const { MongoClient, MongoBulkWriteError } = require('mongodb');
const { VERSION } = require('./catalogue');
const config = require('./config');
const { CallError, TIMEOUT, notFound } = require('./errors');
const { log } = require('./log');

const BATCH = 200;
const DUPLICATE_KEY = 11000;
const MAX_TIME_MS_EXPIRED = 50;
// The store connections of one service, and so the calls it has at the
// store at once. The bound is what keeps an overload's queue in the
// service, where a call that waits past its deadline is dropped (the gate,
// lib/deadline.js), rather than in the store: a service that opened a
// connection per waiting call would hand the store every call at once,
// each of them slower for the others, and none could be taken back once
// sent. The
// driver's own wait queue is never used: the gate lets through no more
// calls than there are connections.
const POOL = 20;

// spec: database and collection; documents(products), the seed; key(request),
// the _id to look up; answer(doc, request), the reply; missing(request), the
// reason when there is no document.
function mongoStore(spec) {
  return {
    settings: () => ({ url: config.url('MONGO_URL', 'mongodb') }),
    async open({ url }, products, deadlines) {
      // A store that is down fails a call within the gateway's deadline
      // instead of after the driver's 30 s default.
      const client = new MongoClient(url, { serverSelectionTimeoutMS: 2000, maxPoolSize: POOL });
      await client.connect();
      const db = client.db(spec.database);
      await seed(db, spec, products);
      const docs = db.collection(spec.collection);
      const gate = deadlines.gate(POOL);
      // maxTimeMS bounds the lookup by the time the call has left; FerretDB
      // honours it for find (it cancels the query and answers error 50),
      // and the gate answers at the deadline anyway should a reply be late.
      const lookup = (key, ms) => docs.findOne({ _id: key }, { maxTimeMS: ms }).catch((err) => {
        if (err.code === MAX_TIME_MS_EXPIRED) throw new CallError(TIMEOUT, `the store did not answer within ${ms} ms, the time left`);
        throw err;
      });
      return {
        async handle(request, deadline) {
          const key = spec.key(request);
          const doc = await gate.run(deadline, (ms) => {
            const answer = lookup(key, ms);
            return { answer, done: answer };
          });
          if (!doc) throw notFound(spec.missing(request));
          return spec.answer(doc, request);
        },
        close: () => client.close(),
      };
    },
  };
}

// seed fills an empty database, or one seeded by another version or for
// another PRODUCTS. Several instances may seed at once: documents have
// deterministic ids and contents, so a duplicate is the same document and
// its error is ignored, and the marker is written last.
async function seed(db, spec, products) {
  const marker = { _id: spec.collection, version: VERSION, products };
  const seeds = db.collection('seeds');
  const found = await seeds.findOne({ _id: spec.collection });
  if (found && found.version === VERSION && found.products === products) return;
  const began = Date.now();
  const docs = spec.documents(products);
  const collection = db.collection(spec.collection);
  let inserted = 0;
  for (let i = 0; i < docs.length; i += BATCH) {
    inserted += await insertNew(collection, docs.slice(i, i + BATCH));
  }
  await seeds.replaceOne({ _id: spec.collection }, marker, { upsert: true });
  log(`seeded ${spec.database}.${spec.collection}: ${inserted} of ${docs.length} documents new, in ${Date.now() - began} ms`);
}

async function insertNew(collection, docs) {
  try {
    return (await collection.insertMany(docs, { ordered: false })).insertedCount;
  } catch (err) {
    if (err instanceof MongoBulkWriteError && err.writeErrors && [].concat(err.writeErrors).every((e) => e.code === DUPLICATE_KEY)) {
      return err.insertedCount;
    }
    throw err;
  }
}

module.exports = { mongoStore };
