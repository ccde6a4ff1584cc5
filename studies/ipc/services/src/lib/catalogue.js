'use strict';
// The shop's data, generated deterministically: every service seeds its own
// store from here, and copies that one service keeps of another's data (a
// recommended product's name and price, a cart line's) agree because both
// come from the same function of the same id.
const { stream } = require('./prng');

// Customers are fixed; products are PRODUCTS (default 1000).
const CUSTOMERS = 1000;
const CURRENCY = 'EUR';
// Bumped whenever the generated data changes, so stores seeded by an older
// version are filled again.
const VERSION = 1;

const ADJECTIVES = ['Classic', 'Compact', 'Deluxe', 'Essential', 'Heritage', 'Modern', 'Nordic', 'Portable',
  'Premium', 'Rustic', 'Sleek', 'Urban', 'Vintage', 'Everyday', 'Studio', 'Outdoor'];
const MATERIALS = ['Oak', 'Walnut', 'Bamboo', 'Steel', 'Linen', 'Wool', 'Leather', 'Ceramic', 'Glass', 'Cotton',
  'Copper', 'Cork', 'Marble', 'Aluminium'];
const NOUNS = [['Desk Lamp', 'lighting'], ['Armchair', 'furniture'], ['Side Table', 'furniture'],
  ['Throw Blanket', 'textiles'], ['Backpack', 'bags'], ['Water Bottle', 'kitchen'], ['Chef Knife', 'kitchen'],
  ['Coffee Grinder', 'kitchen'], ['Bookshelf', 'furniture'], ['Wall Clock', 'decor'], ['Floor Rug', 'textiles'],
  ['Planter', 'garden'], ['Headphones', 'audio'], ['Speaker', 'audio'], ['Duffel Bag', 'bags'],
  ['Cutting Board', 'kitchen'], ['Pendant Light', 'lighting'], ['Office Chair', 'furniture']];
const BRANDS = ['Aalto & Co', 'Brightwork', 'Fjell', 'Hearthline', 'Kestrel', 'Lumen Studio', 'Mariner',
  'Northfold', 'Oakridge', 'Solberg', 'Tidewater', 'Verde'];
const COLOURS = ['black', 'white', 'charcoal', 'sand', 'olive', 'navy', 'terracotta', 'sage', 'mustard',
  'natural', 'slate blue', 'burgundy'];
const WORDS = ('designed built made for everyday use with a durable finish that lasts years of '
  + 'comfort quality craft detail material surface edge handle frame base cover strap seam stitch '
  + 'light heavy soft firm smooth warm cool balanced stable quiet easy clean care simple timeless '
  + 'home office kitchen garden travel weekend morning evening family guests space room corner '
  + 'sourced responsibly tested carefully assembled by hand in small batches and packed without '
  + 'plastic our customers love how it looks feels and works every single day').split(' ');
const FIRST_NAMES = ['Anna', 'Ben', 'Chiara', 'Dmitri', 'Elif', 'Femi', 'Greta', 'Hiro', 'Ines', 'Jonas',
  'Kaja', 'Liam', 'Maya', 'Noor', 'Oskar', 'Priya', 'Rafael', 'Sofia', 'Tomas', 'Yara'];
const WAREHOUSES = ['Rotterdam', 'Leipzig', 'Lyon', 'Milan', 'Poznan'];
const ZONES = ['domestic', 'eu-west', 'eu-east', 'nordics', 'uk', 'overseas'];
// Each zone is offered these services, dearer and slower the farther it is.
const SERVICES = [
  { carrier: 'PostNord', service: 'standard', base: 495, perKg: 45, days: [2, 4] },
  { carrier: 'DHL', service: 'express', base: 1290, perKg: 95, days: [1, 1] },
  { carrier: 'UPS', service: 'economy', base: 395, perKg: 60, days: [4, 7] },
];

function sentence(r, min, max) {
  const n = r.int(min, max);
  const words = [];
  for (let i = 0; i < n; i++) words.push(r.pick(WORDS));
  const text = words.join(' ');
  return `${text[0].toUpperCase()}${text.slice(1)}.`;
}

function sentences(r, min, max, wordsMin, wordsMax) {
  const out = [];
  for (let i = r.int(min, max); i > 0; i--) out.push(sentence(r, wordsMin, wordsMax));
  return out.join(' ');
}

function slug(text) {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-');
}

// card is what other services copy of a product: small and cheap to make.
function card(id) {
  const r = stream('card', id);
  const [noun] = r.pick(NOUNS);
  const name = `${r.pick(ADJECTIVES)} ${r.pick(MATERIALS)} ${noun}`;
  return {
    id,
    name,
    price_cents: r.int(4, 499) * 100 + 99,
    image_url: `https://images.shop.example/products/${id}/${slug(name)}-800x800.jpg`,
  };
}

function product(id) {
  const r = stream('product', id);
  const { name, price_cents, image_url } = card(id);
  const category = NOUNS.find(([noun]) => name.endsWith(noun))[1];
  const features = [];
  for (let i = r.int(3, 5); i > 0; i--) features.push(sentence(r, 4, 8));
  return {
    id,
    sku: `IPC-${String(id).padStart(7, '0')}`,
    name,
    brand: r.pick(BRANDS),
    category,
    colour: r.pick(COLOURS),
    price_cents,
    currency: CURRENCY,
    image_url,
    description: sentences(r, 7, 10, 10, 18),
    features,
  };
}

const DAY_MS = 86_400_000;
const NEWEST_REVIEW = Date.UTC(2025, 5, 30);

// reviews lists a product's reviews, newest first.
function reviews(id) {
  const r = stream('reviews', id);
  const out = [];
  let date = NEWEST_REVIEW;
  for (let k = 1, n = r.int(0, 24); k <= n; k++) {
    date -= r.int(0, 30) * DAY_MS;
    out.push({
      id: `${id}-${k}`,
      author: `${r.pick(FIRST_NAMES)} ${String.fromCharCode(65 + r.int(0, 25))}.`,
      rating: r.pick([5, 5, 5, 4, 4, 4, 3, 2, 1]),
      title: sentence(r, 3, 7),
      body: sentences(r, 2, 4, 8, 14),
      date: new Date(date).toISOString().slice(0, 10),
    });
  }
  return out;
}

// distinctIds draws up to n different ids from 1..products, none in skip.
function distinctIds(r, n, products, skip) {
  const ids = new Set();
  const want = Math.min(n, products - skip.size);
  while (ids.size < want) {
    const id = r.int(1, products);
    if (!skip.has(id)) ids.add(id);
  }
  return [...ids];
}

function recommendations(id, products) {
  const r = stream('recommendations', id);
  return distinctIds(r, 6, products, new Set([id])).map(card);
}

function cart(customer, products) {
  const r = stream('cart', customer);
  return distinctIds(r, r.int(0, 5), products, new Set()).map((pid) => {
    const { name, price_cents } = card(pid);
    return { product: pid, name, price_cents, quantity: r.int(1, 3) };
  });
}

function parcel(id) {
  const r = stream('parcel', id);
  return { product_id: id, weight_grams: r.int(80, 24_000), handling_days: r.int(0, 2), warehouse: r.pick(WAREHOUSES) };
}

function customerZone(customer) {
  return { customer_id: customer, zone: stream('zone', customer).pick(ZONES) };
}

function rates() {
  return ZONES.flatMap((zone, z) => SERVICES.map((s) => ({
    zone,
    carrier: s.carrier,
    service: s.service,
    base_cents: Math.round(s.base * (1 + z / 4)),
    per_kg_cents: Math.round(s.perKg * (1 + z / 3)),
    days_min: s.days[0] + Math.floor(z / 2),
    days_max: s.days[1] + z,
  })));
}

// ids lists 1..n, the ids of n products or customers.
function ids(n) {
  return Array.from({ length: n }, (_, i) => i + 1);
}

// defaultCustomer is the customer a page is shown for when the request names
// none: spread over all customers, the same for the same product.
function defaultCustomer(productId) {
  return 1 + ((productId * 7919) % CUSTOMERS);
}

module.exports = {
  CUSTOMERS, CURRENCY, VERSION, ids,
  product, reviews, recommendations, cart, parcel, customerZone, rates, defaultCustomer,
};
