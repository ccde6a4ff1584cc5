'use strict';
// A small deterministic generator (mulberry32). Each entity draws from a
// stream of its own, seeded by what it is and its id, so product 17 is the
// same whatever PRODUCTS is, in whichever service generates it.

function hashText(text) {
  let h = 0x811c9dc5; // FNV-1a
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function stream(kind, id) {
  let state = (hashText(kind) ^ Math.imul(id, 0x9e3779b1)) >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = (items) => items[Math.floor(next() * items.length)];
  return { next, int, pick };
}

module.exports = { stream };
