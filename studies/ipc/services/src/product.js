'use strict';
// Product information: name, price, description, colour, image.
const catalogue = require('./lib/catalogue');
const { mongoStore } = require('./lib/mongo-store');
const { serve } = require('./lib/serve');

serve('product', mongoStore({
  database: 'ipc_product',
  collection: 'products',
  documents: (products) => catalogue.ids(products).map((id) => ({ _id: String(id), ...catalogue.product(id) })),
  key: ({ product }) => String(product),
  missing: ({ product }) => `no such product ${product}`,
  answer: ({ _id, ...info }) => info,
}));
