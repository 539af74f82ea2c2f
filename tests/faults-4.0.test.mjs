// Connection faults: Net::HTTP in ruby.wasm 4.0 (both Node transports)
// against native MRI running the net/http sources that ruby.wasm 4.0 bundles
// (tests/fixtures/chaos/).
import { faultSuite } from './fixtures/chaos/suite.mjs';

faultSuite('4.0');
