'use strict';
// Reviews: a product's rating and its newest reviews. All of a product's
// reviews are kept in one document, newest first.
const catalogue = require('./lib/catalogue');
const { mongoStore } = require('./lib/mongo-store');
const { serve } = require('./lib/serve');

// How many reviews a page shows.
const LATEST = 5;

serve('reviews', mongoStore({
  database: 'ipc_reviews',
  collection: 'reviews',
  documents: (products) => catalogue.ids(products).map((id) => ({ _id: String(id), product: id, reviews: catalogue.reviews(id) })),
  key: ({ product }) => String(product),
  missing: ({ product }) => `no reviews of product ${product}`,
  answer: ({ product, reviews }) => ({
    product,
    count: reviews.length,
    average: reviews.length === 0 ? 0 : Math.round((100 * reviews.reduce((sum, r) => sum + r.rating, 0)) / reviews.length) / 100,
    latest: reviews.slice(0, LATEST),
  }),
}));
