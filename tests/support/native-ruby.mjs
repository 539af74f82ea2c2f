// Native MRI (Debian's ruby): the decoding oracle and the client reference.
import { spawnSync } from 'node:child_process';

let version;
/** net/http's version when a native `ruby` with net/http and zlib is installed, else null. */
export function haveNativeRuby() {
  if (version === undefined) {
    const r = spawnSync('ruby', ['-rnet/http', '-rzlib', '-e', 'print Net::HTTP::VERSION'], { encoding: 'utf8', timeout: 20000 });
    version = r.status === 0 ? r.stdout : null;
  }
  return version;
}
