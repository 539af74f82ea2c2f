# Stand-in for the `io/wait` extension, which ruby.wasm (WASI) does not ship.
# IO#wait_readable / #wait_writable exist in core since Ruby 3.2, so nothing
# needs defining; net/protocol only requires the feature.
