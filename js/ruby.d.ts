// The ES modules' types (net-http-wasm/ruby): the declarations both module systems share.
export * from './ruby.cjs';
