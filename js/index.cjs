// The CommonJS entry: the ES module itself, loaded by require(esm) (Node
// >= 20.19), so that both module systems share one instance of the API.
'use strict';
module.exports = require('./index.mjs');
