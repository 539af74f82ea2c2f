// Connection faults: Net::HTTP in ruby.wasm 3.4 (both Node transports)
// against native MRI running the net/http sources that ruby.wasm 3.4 bundles
// (tests/support/faults/).
import { faultSuite } from '../support/faults/suite.mjs';

faultSuite('3.4');
