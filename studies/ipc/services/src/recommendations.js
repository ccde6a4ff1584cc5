'use strict';
// Recommendations: other products to show beside one, with the name, price
// and image each needs, copied from the catalogue when they were chosen.
const catalogue = require('./lib/catalogue');
const { mongoStore } = require('./lib/mongo-store');
const { serve } = require('./lib/serve');

serve('recommendations', mongoStore({
  database: 'ipc_recommendations',
  collection: 'recommendations',
  documents: (products) => catalogue.ids(products).map((id) => ({
    _id: String(id), product: id, items: catalogue.recommendations(id, products),
  })),
  key: ({ product }) => String(product),
  missing: ({ product }) => `no recommendations for product ${product}`,
  answer: ({ product, items }) => ({ product, items }),
}));
