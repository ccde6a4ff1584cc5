'use strict';
// Product and customer ids: decimal integers from 1 to MAX_ID, written without
// sign, leading zeros or anything else, so that one id has one spelling and no
// id can smuggle text into a query.
const { invalid } = require('./errors');

const MAX_ID = 999_999_999;
const ID_TEXT = /^[1-9][0-9]{0,8}$/;

function describe(what) {
  return `${what} must be a decimal integer from 1 to ${MAX_ID}`;
}

// parseId reads an id from a URL; text is a string or, from a query string
// that repeats a parameter, an array.
function parseId(text, what) {
  if (typeof text !== 'string' || !ID_TEXT.test(text)) {
    throw invalid(`${describe(what)}, got ${quote(text)}`);
  }
  return Number(text);
}

// checkId accepts an id that arrived as a number (JSON, protobuf).
function checkId(value, what) {
  if (!Number.isInteger(value) || value < 1 || value > MAX_ID) {
    throw invalid(describe(what));
  }
  return value;
}

// quote shows what was sent, cut short: the reason must help the client,
// not echo 10 KB back.
function quote(text) {
  if (Array.isArray(text)) return 'the parameter more than once';
  if (typeof text !== 'string') return 'nothing';
  const shown = text.length > 40 ? `${text.slice(0, 40)}… (${text.length} characters)` : text;
  return JSON.stringify(shown);
}

module.exports = { parseId, checkId };
