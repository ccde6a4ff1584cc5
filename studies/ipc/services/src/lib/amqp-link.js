'use strict';
// A RabbitMQ connection that comes back by itself after the broker goes
// away (amqplib's opt-in recovery), declares the study's topology on every
// connect, and runs the caller's setup on a fresh confirm channel.
//
// Topology: each service has a durable request queue ipc.<service>; each
// gateway a durable reply queue; all of them dead-letter into the fanout
// exchange ipc.dead, whose durable queue ipc.dead keeps what was rejected.
//
// Requests expire (their expiration is the time their page has left), and
// the broker dead-letters an expired message too. Those are not kept: under
// an overload that times pages out by the thousand they would fill ipc.dead,
// which nothing consumes, with persistent copies, written to disk just when
// the broker is busiest. So ipc.dead reaches its queue through the headers
// exchange ipc.dead.kept, which passes only what a consumer rejected
// (x-first-death-reason, which the broker sets on dead-lettering); an
// expired request routes nowhere and is gone.
const amqp = require('amqplib');
const { log } = require('./log');

const DEAD = 'ipc.dead';
const KEPT = 'ipc.dead.kept';
const KEEP_REJECTED = { 'x-match': 'any-with-x', 'x-first-death-reason': 'rejected' };
// Seconds between heartbeats: a broker that hangs (rather than closes the
// connection) is noticed after two missed ones.
const HEARTBEAT_S = 5;
// Reconnect quickly: the broker is on the same machine, and how soon a
// system recovers is what the study measures.
const RECOVERY = { initialDelay: 100, maxDelay: 1000, factor: 2, jitter: 0.2 };

async function declare(ch, queues, replyQueues = []) {
  await ch.assertExchange(DEAD, 'fanout', { durable: true });
  await ch.assertExchange(KEPT, 'headers', { durable: true });
  await ch.bindExchange(KEPT, DEAD, '');
  await ch.assertQueue(DEAD, { durable: true });
  await ch.bindQueue(DEAD, KEPT, '', KEEP_REJECTED);
  // A broker declared by an earlier version binds the queue to ipc.dead
  // directly, which would keep expired requests; unbinding what is not
  // bound is no error.
  await ch.unbindQueue(DEAD, DEAD, '');
  for (const q of queues) await ch.assertQueue(q, { durable: true, deadLetterExchange: DEAD });
  // A reply queue outlives a broker restart, with the replies in it, but
  // not its gateway by long: unused for a minute, the broker deletes it.
  for (const q of replyQueues) await ch.assertQueue(q, { durable: true, deadLetterExchange: DEAD, expires: 60_000 });
}

// open connects to url and keeps connected; setup(ch) runs on a confirm
// channel after each connect, which it may keep until onDown(ch) says the
// channel is gone. It resolves after the first successful setup.
async function open(url, name, { queues, replyQueues, prefetch, setup, onDown }) {
  const withHeartbeat = new URL(url);
  if (!withHeartbeat.searchParams.has('heartbeat')) withHeartbeat.searchParams.set('heartbeat', String(HEARTBEAT_S));
  let closing = false;
  let connects = 0;
  let failing = false;
  const conn = await amqp.connect(withHeartbeat.toString(), {
    clientProperties: { connection_name: name },
    recovery: {
      ...RECOVERY,
      waitForConnect: false, // so that the listeners below see the first attempts too
      async setup(model) {
        model.on('error', () => {}); // the close that follows is what counts
        const ch = await model.createConfirmChannel();
        ch.on('error', (err) => log(`broker channel: ${err.message}`));
        // A channel the broker closed on its own (a precondition failed)
        // leaves the connection up: closing it makes recovery start over.
        ch.on('close', () => {
          onDown(ch);
          if (!closing) model.close().catch(() => {});
        });
        await declare(ch, queues, replyQueues);
        await ch.prefetch(prefetch);
        await setup(ch);
      },
    },
  });
  conn.on('error', () => {});
  conn.on('connect', () => {
    connects++;
    failing = false;
    log(connects === 1 ? 'connected to the broker' : `reconnected to the broker (connection ${connects})`);
  });
  conn.on('disconnect', (err) => log(`lost the broker: ${err.message}`));
  conn.on('connect-failed', (err) => {
    if (!failing) log(`cannot reach the broker (${err.message}); retrying every second at most`);
    failing = true;
  });
  await conn.waitForConnect();
  return {
    connects: () => connects,
    async close() {
      closing = true;
      await conn.close().catch(() => {});
    },
  };
}

module.exports = { open };
