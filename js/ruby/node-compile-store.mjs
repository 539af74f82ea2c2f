// Where Node keeps compiled Ruby (compile-cache.mjs) from one process to
// the next: a folder of files named by the key's SHA-256, each the SHA-256
// of its bytes and then the bytes (a file cut short, or changed, is not
// used), written whole under another name and then renamed. Ruby loads
// them without checking them further, so the default folder (the user's
// cache folder's net-http-wasm) is used only when it is this user's and no
// one else may write in it.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, lstatSync, readFileSync, writeFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve, isAbsolute } from 'node:path';
import { CompileCache } from './compile-cache.mjs';

const sha256 = (bytes) => createHash('sha256').update(bytes).digest();
const uid = () => (typeof process.getuid === 'function' ? process.getuid() : null);

/**
 * createRubyVM's and installNetHttp's compileCache: true → this folder:
 * net-http-wasm in the user's cache folder ($XDG_CACHE_HOME or ~/.cache;
 * ~/Library/Caches on macOS; %LOCALAPPDATA% on Windows).
 */
export function defaultCompileCacheDir() {
  const env = process.env;
  let base;
  if (process.platform === 'win32') base = env.LOCALAPPDATA || join(homedir(), 'AppData', 'Local');
  else if (process.platform === 'darwin') base = join(homedir(), 'Library', 'Caches');
  else base = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  return join(base, 'net-http-wasm');
}

// One cache per folder (and one without any), shared by the VMs of the process.
const caches = new Map();

/**
 * The CompileCache of an option: true (default) the default folder, a
 * String that folder (made if missing), false none at all.
 */
export function nodeCompileCache(option = true) {
  if (option === false) return null;
  if (option !== true && typeof option !== 'string') throw new TypeError(`compileCache must be true, false or a folder, not ${option === null ? 'null' : typeof option}`);
  let dir;
  try {
    dir = option === true ? defaultCompileCacheDir() : resolve(option);
  } catch {
    dir = null; // (no home folder: memory only)
  }
  let cache = caches.get(dir);
  if (!cache) {
    cache = new CompileCache({ digest: (key) => sha256(key).toString('hex'), store: dir === null ? null : folderStore(dir, option === true) });
    caches.set(dir, cache);
  }
  return cache;
}

// The folder's store: made when something is first kept; unused (memory
// only) where it cannot be made or, for the default one, is not private to
// this user.
function folderStore(dir, shared) {
  let usable = null; // (null: not looked at yet)
  const check = (make) => {
    if (usable !== null) return usable;
    try {
      if (make) mkdirSync(dir, { recursive: true, mode: 0o700 });
      const st = lstatSync(dir);
      usable = st.isDirectory() && !(shared && ((uid() != null && st.uid !== uid()) || (process.platform !== 'win32' && (st.mode & 0o022) !== 0)));
    } catch {
      // (a folder not there yet is looked at again when something is kept)
      if (make) usable = false;
      return false;
    }
    return usable;
  };
  return {
    get(name) {
      if (!check(false)) return null;
      let file;
      try {
        file = readFileSync(join(dir, name));
      } catch {
        return null;
      }
      const bin = file.subarray(32);
      return file.length > 32 && sha256(bin).equals(file.subarray(0, 32)) ? new Uint8Array(bin) : null;
    },
    put(name, bin) {
      if (!check(true)) return;
      const part = join(dir, `${name}.${randomBytes(6).toString('hex')}.part`);
      try {
        writeFileSync(part, Buffer.concat([sha256(bin), bin]), { mode: 0o600 });
        renameSync(part, join(dir, name));
      } catch (e) {
        rmSync(part, { force: true });
        throw e;
      }
    },
  };
}
