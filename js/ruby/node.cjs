// The CommonJS entry of net-http-wasm/ruby in Node: the ES module itself,
// loaded by require(esm) (Node >= 20.19), as js/index.cjs.
'use strict';
module.exports = require('./node.mjs');
