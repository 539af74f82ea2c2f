// Compiled Ruby (RubyVM::InstructionSequence#to_binary) kept from one VM
// to the next, for ruby/net_http_wasm/compile_cache.rb: by the digest of
// the key Ruby writes (its Ruby, its compile options, a file's path and
// bytes), in this process's memory and, when a store is given, in it (a
// folder: node-compile-store.mjs). The same key and the same Ruby make the
// same binary, so a VM of any other bridge may take what one kept.

// What this process keeps in memory, in all (past it: the store only).
const MEMORY_LIMIT = 64 << 20;

export class CompileCache {
  /**
   * digest(bytes) → a String naming the key (e.g. its SHA-256 in hex);
   * store: { get(name) → Uint8Array | null, put(name, bytes) } or null.
   */
  constructor({ digest, store = null, limit = MEMORY_LIMIT }) {
    this.digest = digest;
    this.store = store;
    this.limit = limit;
    this.kept = new Map(); // name → bytes
    this.size = 0;
  }

  name(key) {
    return this.digest(key);
  }

  // The bytes kept under name, or null.
  find(name) {
    let bin = this.kept.get(name);
    if (bin) return bin;
    if (!this.store) return null;
    try {
      bin = this.store.get(name);
    } catch {
      bin = null;
    }
    if (bin) this.remember(name, bin);
    return bin;
  }

  keep(name, bin) {
    this.remember(name, bin);
    if (!this.store) return;
    try {
      this.store.put(name, bin);
    } catch {
      // (a store that cannot write: kept in memory only)
    }
  }

  remember(name, bin) {
    if (this.kept.has(name) || this.size + bin.length > this.limit) return;
    this.kept.set(name, bin);
    this.size += bin.length;
  }
}
