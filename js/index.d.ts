// The ES module's types: the declarations both module systems share.
export * from './index.cjs';
