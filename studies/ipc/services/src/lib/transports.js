'use strict';
// The transport of a style, loaded on demand so that a program loads only
// the libraries of the style it runs.

function transport(style) {
  switch (style) {
    case 'rest': return require('./transport-rest');
    case 'grpc': return require('./transport-grpc');
    case 'amqp': return require('./transport-amqp');
    default: throw new Error(`no transport for ${style}`);
  }
}

module.exports = { transport };
