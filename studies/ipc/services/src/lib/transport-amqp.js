'use strict';
// RabbitMQ request-reply with amqplib (the wire is in README.md).
//
// The gateway publishes a persistent request to the service's durable queue
// on a confirm channel, with a correlation id, its reply queue and its
// deadline; a request the broker does not confirm fails at once. A service
// takes up to PREFETCH requests at a time, answers each with a persistent
// reply and acks the request only once the broker has confirmed the reply,
// so a broker restart at any point loses neither: what was confirmed is on
// disk and is delivered again. A message no service can read is rejected
// without requeueing, which dead-letters it into ipc.dead.
//
// Deadlines: a request carries the gateway's deadline in the x-deadline
// header and, as its expiration, the time left until then, so that the
// broker drops a request that waited in the queue past it instead of
// delivering it. A service drops (acks unanswered) a request past its
// deadline on delivery, and one its store could not answer in time: its
// page has been a 504 already. The broker drops expired requests without
// keeping them (amqp-link.js), and a confirmed request is still kept across
// a broker restart until its deadline, as an unexpired one is on disk.
const { randomUUID } = require('node:crypto');
const { open } = require('./amqp-link');
const config = require('./config');
const { HEADER } = require('./deadline');
const { CallError, NOT_FOUND, INVALID, FAILED, TIMEOUT, kindOf } = require('./errors');
const { createHttpServer, listen } = require('./http-server');
const { checkId } = require('./ids');
const { drained } = require('./lifecycle');
const { throttled } = require('./log');
const { SERVICES, NAMES } = require('./services');

const KINDS = [NOT_FOUND, INVALID, FAILED, TIMEOUT];
// A request is a few bytes; a large message is refused before parsing.
const MAX_MESSAGE = 4096;
const REPLY_TO = /^ipc\.reply\.[\x21-\x7e]{1,200}$/;
const JSON_TYPE = 'application/json';

function serverSettings() {
  return {
    url: config.url('AMQP_URL', 'amqp'),
    prefetch: config.int('PREFETCH', 64, 1, 65_535),
    limits: config.httpLimits(),
  };
}

async function serve(service, handle, addr, { url, prefetch, limits }, deadlines) {
  let consuming = null; // {ch, tag}: the consumer, while its channel is open
  const inflight = new Set();

  const onMessage = (ch, msg) => {
    if (msg === null) {
      // The broker cancelled the consumer (its queue was deleted): closing
      // the channel makes the link reconnect, declare and consume again.
      ch.close().catch(() => {});
      return;
    }
    const parsed = parseRequest(service, msg, deadlines);
    if (parsed.error) {
      throttled(`dead-lettered a request to ${service.queue}: ${parsed.error}`);
      settle(() => ch.nack(msg, false, false));
      return;
    }
    // The gateway has answered 504 already; the work would be wasted.
    if (parsed.deadline <= Date.now()) {
      deadlines.drop();
      settle(() => ch.ack(msg));
      return;
    }
    const work = answer(handle, service, parsed.request, parsed.deadline)
      .then((reply) => reply && publish(ch, parsed.replyTo, reply, { correlationId: parsed.correlationId }))
      .then(() => settle(() => ch.ack(msg)))
      .catch(() => {}); // the channel is gone: the broker delivers the request again
    inflight.add(work);
    work.finally(() => inflight.delete(work));
  };

  const link = await open(url, `${service.name}/amqp`, {
    queues: [service.queue],
    prefetch,
    async setup(ch) {
      const { consumerTag } = await ch.consume(service.queue, (msg) => onMessage(ch, msg), { noAck: false });
      consuming = { ch, tag: consumerTag };
    },
    onDown(ch) {
      if (consuming && consuming.ch === ch) consuming = null;
    },
  });

  // Listening only now, a TCP connect to ADDR means ready, as in the other
  // styles; /healthz says whether the service still consumes.
  const app = createHttpServer(limits);
  app.get('/healthz', async (req, reply) => (consuming ? { status: 'ok' } : reply.code(503).send({ error: 'not connected to the broker' })));
  app.get('/stats', async () => ({ service: service.name, style: 'amqp', deadline: deadlines.stats() }));
  await listen(app, addr);
  return {
    async close() {
      const health = drained(app.close());
      // No new deliveries; the requests under way are answered and acked,
      // and any left when the connection closes go back to the queue.
      if (consuming) await consuming.ch.cancel(consuming.tag).catch(() => {});
      consuming = null;
      await drained(Promise.all(inflight));
      await link.close();
      await health;
    },
  };
}

// answer is the reply to a request, or null for one dropped at its
// deadline: nobody waits for that reply.
async function answer(handle, service, request, deadline) {
  try {
    return { ok: await handle(request, deadline) };
  } catch (err) {
    const kind = kindOf(err);
    if (kind === TIMEOUT) return null;
    if (kind === FAILED) throttled(`${service.name} failed: ${err.message}`);
    return { error: { kind, message: kind === FAILED ? `${service.name} failed` : err.message } };
  }
}

// parseRequest checks everything a service relies on; what fails is
// dead-lettered, since no retry could make it readable.
function parseRequest(service, msg, deadlines) {
  const { replyTo, correlationId, headers } = msg.properties;
  if (typeof replyTo !== 'string' || !REPLY_TO.test(replyTo)) return { error: 'no reply_to of the form ipc.reply.*' };
  if (typeof correlationId !== 'string' || correlationId === '' || correlationId.length > 255) return { error: 'no correlation_id' };
  if (msg.content.length > MAX_MESSAGE) return { error: `over ${MAX_MESSAGE} bytes` };
  let body;
  try {
    body = JSON.parse(msg.content.toString('utf8'));
  } catch {
    return { error: 'not JSON' };
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { error: 'not a JSON object' };
  const keys = Object.keys(body);
  if (keys.length !== service.fields.length || !service.fields.every((f) => keys.includes(f))) {
    return { error: `fields are not exactly ${service.fields.join(', ')}` };
  }
  try {
    for (const field of service.fields) checkId(body[field], field);
  } catch (err) {
    return { error: err.message };
  }
  // A missing or malformed x-deadline gets the default budget, a far one
  // the most a service allows; neither is a reason to refuse the request.
  const deadline = deadlines.resolve(headers ? headers[HEADER] : undefined);
  return { request: body, replyTo, correlationId, deadline };
}

// publish sends a persistent JSON message to a queue through the default
// exchange and resolves once the broker has confirmed it.
function publish(ch, queue, body, properties) {
  return new Promise((resolve, reject) => {
    ch.sendToQueue(queue, Buffer.from(JSON.stringify(body)), { ...properties, persistent: true, contentType: JSON_TYPE },
      (err) => (err ? reject(err) : resolve()));
  });
}

// settle acks or rejects a message on the channel it came from; on a
// closed channel that is impossible and unneeded, as the broker has taken
// the message back.
function settle(fn) {
  try {
    fn();
  } catch {
    // the channel closed
  }
}

function clientSettings(addr) {
  return { url: config.url('AMQP_URL', 'amqp'), replyQueue: `ipc.reply.${addr.text}` };
}

async function client({ url, replyQueue }) {
  let channel = null; // to publish on, while it is open
  const pending = new Map(); // correlation id → the call waiting for its reply
  const counts = { published: 0, confirmed: 0, unconfirmed: 0, replies: 0, late_replies: 0 };

  const finish = (id) => {
    const call = pending.get(id);
    if (call) {
      pending.delete(id);
      clearTimeout(call.timer);
    }
    return call;
  };

  const onReply = (ch, msg) => {
    if (msg === null) {
      ch.close().catch(() => {}); // as a service does
      return;
    }
    let body;
    try {
      body = JSON.parse(msg.content.toString('utf8'));
    } catch {
      throttled(`dead-lettered a reply that is not JSON from ${replyQueue}`);
      settle(() => ch.nack(msg, false, false));
      return;
    }
    settle(() => ch.ack(msg));
    const call = finish(msg.properties.correlationId);
    if (!call) {
      counts.late_replies++; // its call ended already, or a duplicate after a redelivery
      return;
    }
    counts.replies++;
    if (body && typeof body.ok === 'object' && body.ok !== null) call.resolve(body.ok);
    else if (body && body.error && KINDS.includes(body.error.kind)) call.reject(new CallError(body.error.kind, String(body.error.message)));
    else call.reject(new CallError(FAILED, 'malformed reply'));
  };

  const link = await open(url, `gateway/amqp ${replyQueue}`, {
    queues: NAMES.map((name) => SERVICES[name].queue),
    replyQueues: [replyQueue],
    prefetch: 1000,
    async setup(ch) {
      await ch.consume(replyQueue, (msg) => onReply(ch, msg), { noAck: false });
      channel = ch;
    },
    onDown(ch) {
      if (channel === ch) channel = null;
    },
  });

  return {
    ready: () => channel !== null,
    stats: () => ({ ...counts, connects: link.connects(), pending: pending.size }),
    call(name, request, deadline) {
      return new Promise((resolve, reject) => {
        const ch = channel;
        if (!ch) {
          reject(new CallError(FAILED, 'not connected to the broker'));
          return;
        }
        const id = randomUUID();
        const ms = Math.max(1, Math.ceil(deadline - Date.now()));
        const timer = setTimeout(() => {
          finish(id);
          reject(new CallError(TIMEOUT, `no reply within ${ms} ms`));
        }, ms);
        pending.set(id, { resolve, reject, timer });
        counts.published++;
        const confirmed = (err) => {
          if (!err) {
            counts.confirmed++;
            return;
          }
          counts.unconfirmed++;
          // Unconfirmed, the request may be lost: say so now rather than
          // time out. Should it have been kept after all, its late reply
          // is dropped.
          if (finish(id)) reject(new CallError(FAILED, 'the broker did not confirm the request'));
        };
        try {
          ch.sendToQueue(SERVICES[name].queue, Buffer.from(JSON.stringify(request)), {
            persistent: true,
            contentType: JSON_TYPE,
            correlationId: id,
            replyTo: replyQueue,
            // The broker drops the request once its page has timed out.
            expiration: String(ms),
            headers: { [HEADER]: deadline },
          }, confirmed);
        } catch (err) {
          confirmed(err);
        }
      });
    },
    close: () => link.close(),
  };
}

module.exports = { serverSettings, serve, clientSettings, client };
