// Prints the bytes Ruby's Net::HTTP would send for a form POST, and what
// URI.encode_www_form and each_capitalized give, all computed by the codec.
//   npm run demo       (or node examples/demo.mjs; the package imported by
//                       name runs as it is where net-http-wasm is installed)
import { Request, URI, encodeWwwForm, decodeWwwForm, eachCapitalized } from 'net-http-wasm';

const req = new Request('POST', URI('http://example.com:8080/signup?ref=demo'), { 'X-Trace': 'abc123' });
req.setFormData({ name: 'Zoë Smith', langs: ['ruby', 'c'], note: '50% off ~ today' });
const bytes = req.toBytes();
console.log(`# Net::HTTP::Post, ${bytes.length} bytes on the wire:`);
process.stdout.write(new TextDecoder().decode(bytes).replace(/\r\n/g, '\u240d\u240a\n'));
console.log('\n');
console.log('# URI.encode_www_form([["q", "a b"], ["tilde", "~"], ["flag", nil]])');
console.log(encodeWwwForm([['q', 'a b'], ['tilde', '~'], ['flag', null]]));
console.log('# URI.decode_www_form("a=1&b=%E2%9C%93&c")');
console.log(JSON.stringify(decodeWwwForm('a=1&b=%E2%9C%93&c')));
console.log('# each_capitalized after add_field');
console.log(JSON.stringify(eachCapitalized([['content-type', 'text/plain'], ['x-forwarded-for', '10.0.0.1'], ['X-FORWARDED-FOR', '10.0.0.2']])));
