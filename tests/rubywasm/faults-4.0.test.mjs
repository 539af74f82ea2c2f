// Connection faults: Net::HTTP in ruby.wasm 4.0 (both Node transports)
// against native MRI running the net/http sources that ruby.wasm 4.0 bundles
// (tests/support/faults/).
import { faultSuite } from '../support/faults/suite.mjs';

faultSuite('4.0');
