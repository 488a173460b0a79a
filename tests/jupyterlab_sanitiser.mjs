// Reads a JSON list of HTML strings on stdin and writes them as JupyterLab shows an untrusted notebook's
// text/html: through @jupyterlab/apputils' Sanitizer (the real one, from the project's node_modules). The class is
// the package's public export; it is imported from its own module because the package's index, written for a
// bundler, does not load in Node (it imports directories).
import { Sanitizer } from '@jupyterlab/apputils/lib/sanitizer.js';

const sanitizer = new Sanitizer();
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', chunk => (input += chunk));
process.stdin.on('end', () => {
  const pages = JSON.parse(input);
  process.stdout.write(JSON.stringify(pages.map(page => sanitizer.sanitize(page))));
});
