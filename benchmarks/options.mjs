// A benchmark's command-line options: `--name value` and `--flag`. --help
// prints the usage (the comment that opens the benchmark's file) and exits;
// an option it does not take prints the usage and exits with status 2,
// before anything runs or any result is written.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function options(fileUrl, { valued = [], flags = [] } = {}) {
  const args = process.argv.slice(2);
  const unknown = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (valued.includes(a.slice(2)) && a.startsWith('--') && i + 1 < args.length) i++;
    else if (!(a.startsWith('--') && flags.includes(a.slice(2)))) unknown.push(a);
  }
  if (unknown.length) {
    const text = readFileSync(fileURLToPath(fileUrl), 'utf8');
    const usage = text.slice(0, text.indexOf('\nimport')).replace(/^\/\/ ?/gm, '');
    const asked = unknown.every((a) => a === '--help' || a === '-h');
    (asked ? process.stdout : process.stderr).write(`${asked ? '' : `unknown option: ${unknown.join(' ')}\n\n`}${usage}\n`);
    process.exit(asked ? 0 : 2);
  }
  return {
    has: (name) => args.includes(`--${name}`),
    get: (name, dflt) => {
      const i = args.indexOf(`--${name}`);
      return i >= 0 ? args[i + 1] : dflt;
    },
  };
}
